"""The HTTP routes, one module per audience (teams, public boards, reviewers, organisers)."""
