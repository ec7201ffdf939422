"""The team CLI (`opjudge login`, `submit`, `status`, `board`): a small HTTP client of the team API.

Kept free of web-framework and database imports so that it starts quickly on a
team's laptop; api/client/commands.py registers the commands.
"""
