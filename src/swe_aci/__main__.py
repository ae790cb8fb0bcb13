"""`python -m swe_aci` is the `swe-aci` command."""

from swe_aci.cli import main

main()
