"""Fetch: every official edition from where it is published, into a corpus folder with its fetched.json."""
