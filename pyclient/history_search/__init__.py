"""history-search: conversation-history search for AI agents, built inside PostgreSQL."""

__version__ = "0.1.0"
