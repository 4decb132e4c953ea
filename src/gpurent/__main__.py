"""`python -m gpurent` runs the CLI."""

from gpurent.cli.main import main

if __name__ == "__main__":
    main()
