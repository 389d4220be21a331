"""The report of an analysis: Markdown, HTML, console tables and plots."""
