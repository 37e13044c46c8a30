from devtools.cli import main

main()
