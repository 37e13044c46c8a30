from pipeline.cli.main import main

main()
