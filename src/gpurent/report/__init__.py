"""Renderers of result objects: terminal (rich), Markdown, HTML with inline SVG, JSON."""
