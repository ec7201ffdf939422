"""The OpenAPI schema of error answers, made to say what api/web/errors.py sends.

FastAPI documents every 422 as `{"detail": [ValidationError, ...]}`, which is what
a request that fails validation gets. A request that validates but is refused by
the store or the engine (an unknown problem, `freeze_at` before the start, a value
the database cannot hold) gets 422 with `{"detail": "<the reason>"}`, one line a
person can read. Both are 422, so the schema says `detail` is either.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

VALIDATION_SCHEMA = "HTTPValidationError"


def reason_or_errors(item_ref: str) -> dict[str, Any]:
    """`detail`: the reason as a string, or the list of validation errors."""
    return {
        "title": "Detail",
        "description": "why the request was refused: one line (the request was valid but cannot be done), "
        "or the list of fields that failed validation",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": item_ref}}],
    }


def install_error_schema(app: FastAPI) -> None:
    """Replace `app.openapi` by one whose 422 schema allows both shapes of `detail` (built once)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        components = schema.get("components", {}).get("schemas", {})
        validation = components.get(VALIDATION_SCHEMA)
        if validation is not None:
            validation["properties"]["detail"] = reason_or_errors("#/components/schemas/ValidationError")
            validation["required"] = ["detail"]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
