"""Privacy-preserving synthetic text with entity-aware control codes."""

__version__ = "0.1.0"
