"""`python -m judge.runner.child`: the runner child (judge/runner/child/main.py)."""

from judge.runner.child.main import main

if __name__ == "__main__":
    main()
