"""Pydantic schemas at the API edge, named for the way data flows (XCreate in, XPublic out)."""
