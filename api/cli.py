"""The `opjudge` command: the engine's commands (judge/cli.py) plus the service's.

Each part registers its own commands on the one Typer app, so judge/ never
imports the web or the database, and the service adds to it without edits there.
"""

from __future__ import annotations

import api.client.commands
import api.client.finals
import judge.cli
import workers.commands


def build_app() -> object:
    app = judge.cli.app
    # Service commands register here, one line per part (serve/worker, team client).
    workers.commands.register(app)
    api.client.commands.register(app)
    api.client.finals.register(app)
    return app


def main() -> None:
    build_app()
    judge.cli.main()
