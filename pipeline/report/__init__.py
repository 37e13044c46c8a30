"""Report: tables -> pages in reports/ (jinja2, autoescaped). build renders every page; editionpages, rulepages,
redline and feed build their parts; pagekeys says which pages must be rendered again."""
