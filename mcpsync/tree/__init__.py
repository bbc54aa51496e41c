"""Locked dependency trees: every transitive package a server runs, pinned by hash."""
