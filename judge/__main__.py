from judge.cli import main

main()
