"""``--engine batch``: a provider's batch API. The engine (``_engine``) knows providers only
through the table and protocol of ``_provider``; each provider is one module (``_openai``,
``_anthropic``, ``_vertex``, ``_bedrock``) over the shared steps, request templates and
result-line contract."""
