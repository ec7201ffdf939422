"""A bounded schemathesis run against the ASGI app: no 5xx, answers match the schema.

One process, a few examples per operation, as the organiser (the caller who can
reach every route; the auth matrix is tested elsewhere). The checks are the two
that found bugs in the security review: server errors, and answers (422s from
the admin routes among them) that the OpenAPI schema does not describe.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from tests.api.conftest import Contest

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.checks import not_a_server_error, response_schema_conformance  # noqa: E402

EXAMPLES_PER_OPERATION = 10


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_no_server_error_and_answers_match_the_schema(client: TestClient, contest: Contest) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", client.app)
    headers = contest.auth("admin")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, "the schema lost its operations"
    failures: list[str] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=headers, checks=[not_a_server_error, response_schema_conformance])

        try:
            check()
        except Unsatisfiable:
            continue  # no valid example within the budget: nothing sent, nothing to judge
        except Exception as error:  # noqa: BLE001 - collect every operation's failure, then fail once
            failures.append(f"{operation.label}: {error}")
    assert not failures, "\n\n".join(failures)
