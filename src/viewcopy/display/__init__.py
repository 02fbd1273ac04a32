"""Showing evidence: stride and storage diagrams, the spreadsheet, the explorer, text formats."""
