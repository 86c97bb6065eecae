"""Judges, layer 2: calls. A judge specification, the judge (prompt in, verdict out), the LLM
client (litellm + instructor, retries, rate limits), the response cache, the local model
server and the judgment a call becomes."""
