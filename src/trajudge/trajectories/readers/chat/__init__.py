"""Readers of chat logs: OpenAI chat messages, Responses API items, LangChain dumps."""
