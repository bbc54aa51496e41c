"""edit."""
