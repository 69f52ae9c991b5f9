"""The printing catalogue: importing Scryfall files and re-opening cards when it changes."""
