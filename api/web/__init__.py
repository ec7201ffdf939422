"""The web service: the FastAPI app, its JSON routes, the server-rendered pages, their templates and
static files, and the HTTP edge (middleware, error handlers, upload parsing, /metrics).

Only the API process (`opjudge serve`) loads this package. The service core beside it (api/store,
api/dispatch.py, api/settings.py) is shared with the workers, which never import api.web
(tests/test_layout.py); docs/architecture.md, "Layout".
"""
