"""Files the package publishes: written whole or not at all (`atomic`). Standard library only."""
