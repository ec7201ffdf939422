"""The `opjudge` command: the engine's commands (judge/cli.py) plus the service's.

Each part registers its own commands on the one Typer app, so judge/ never
imports the web or the database, and the service adds to it without edits there:
the service's processes (serve, worker, admin-token) in api/service_commands.py,
beside api/serve.py that `serve` runs, and the team client in api/client/.
"""

from __future__ import annotations

import api.client.commands
import api.client.finals
import api.service_commands
import judge.cli


def build_app() -> object:
    app = judge.cli.app
    # Service commands register here, one line per part (serve/worker/admin-token, team client).
    api.service_commands.register(app)
    api.client.commands.register(app)
    api.client.finals.register(app)
    return app


def main() -> None:
    build_app()
    judge.cli.main()
