"""Patterns are data: every regular expression and phrase list the stages share, each with an example."""
import re

# The rule-number grammar, in named pieces; every pattern that finds a rule number is built from them
# (pipeline/ruleid.py parses what they find). The pieces are pattern text, to be put inside a pattern.
PART_DIGIT = r"[1-9]"  # "1" in "1. The Game"
CHAPTER_NUMBER = r"\d{3}"  # "212"
RULE_PART = r"\.\d+[a-z]?"  # ".1b" in 212.1b: the rule's number and, for a subrule, its letter
LETTER_RANGE = r"-[a-z]"  # "-k" in the range 212.2h-k
RULING_PART = r"\.Ruling\.\d+"  # ".Ruling.1" in 212.8.Ruling.1
NUMBER = rf"{CHAPTER_NUMBER}(?:{RULE_PART})?"  # 212 | 212.1 | 212.1b
DOTTED_NUMBER = rf"{CHAPTER_NUMBER}{RULE_PART}"  # 212.1 | 212.1b (never a bare chapter: "100 life")
NUMBER_OR_RANGE = rf"{CHAPTER_NUMBER}(?:{RULE_PART}(?:{LETTER_RANGE})?)?"  # 212 | 212.1b | 212.2h-k
SPACED_RULE_PART = r"\.\s?\d+[a-z]?"  # ". 8b" in "606. 8b": RULE_PART as some editions print it, a stray space in it

# A rule number as printed: 212 | 212.1 | 212.1b | 212.8.Ruling.1 | 212.2h-k (a range of subrules).
RULE_NUMBER = re.compile(rf"^{NUMBER_OR_RANGE}(?:{RULING_PART})?$")

# A paragraph that starts with a number: "212.1b. When", "100.1. These", "606. 8b Players" (stray
# space), "212.3 - Creatures" (rulings page), "1. The Game" (a part heading).
NUMBERED_START = re.compile(
    rf"^(?P<num>{CHAPTER_NUMBER}(?:{SPACED_RULE_PART})?(?:{RULING_PART})?|{CHAPTER_NUMBER}{SPACED_RULE_PART})"
    r"(?P<sep>\.?\s+-\s+|\.?\s+|\.$)"
)
# What looks like a misprinted rule number at a paragraph's start: "306.b" (for 306.3b), "306.3.b",
# "3063b", "306,3b". Repaired only when the numbers around it leave one possibility.
NEAR_NUMBER = re.compile(r"^(?P<num>\d{3}[.,]?(?:\d+)?[.,]?[a-z]?)(?=\.?\s+[A-Z])")
PART_START = re.compile(rf"^(?P<num>{PART_DIGIT})\.\s+(?P<title>[A-Z].*)$")  # "1. The Game"

# "These rules are effective as of June 17, 2011." / "These rules are current as of October 1, 2003."
EFFECTIVE_DATE = re.compile(
    r"\b(?:effective|current)\s+as\s+of\s+(?P<date>[A-Z][a-z]+\.?\s+\d{1,2},\s+\d{4})"
)
# The title, in any case and across a line break: "Comprehensive Rules", "COMPREHENSIVE\nRULES".
TITLE = re.compile(r"comprehensive\s+rules", re.I)
# A date printed beside the title in the pre-2003 editions: "COMPREHENSIVE RULES      04/23/99".
TITLE_DATE = re.compile(r"comprehensive\s+rules[ \t]+(?P<m>[01]?\d)/(?P<d>[0-3]?\d)/(?P<y>\d{4}|\d\d)\b", re.I)
# A date in a file name: 2011-06-17, 20110617, 2011_06_17.
FILE_DATE = re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)[-_.]?(?P<m>[01]\d)[-_.]?(?P<d>[0-3]\d)(?!\d)")

# Words known to carry non-ASCII letters in the rules: a candidate decoding that yields them is right.
KNOWN_WORDS = ("Dandân", "Lim-Dûl", "Jötun", "Ghazbán", "Junún", "Ifh-Bíff", "Æther", "Márton", "Séance")
TYPOGRAPHY = set("“”‘’–—…™®©•")  # characters a rules text plausibly holds beside ASCII
ACCENTED = set("âäàáåãéèêëíìîïóòôöõúùûüñçýÿæœ")  # plausible only inside a word

# Typography folding for the comparison form; the original text is never overwritten.
FOLD = str.maketrans({
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"',
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'",
    "–": "-", "—": "-", "―": "-", "‒": "-", "−": "-", "‐": "-", "‑": "-",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ",
    "…": "...",
})
TRADEMARK = re.compile(r"\s?(?:\(TM\)|™|\(R\)|®)|(?<=_)TM\b")  # "DCI(TM)" ~ "DCI™" ~ "DCI", "_Odyssey_TM"
LOST_TRADEMARK = re.compile(r"(?<=[^\W_])_(?=[\s.,;:)]|$)")  # "Oracle_ card": a ™ the TXT edition lost
# Dashes as the text editions spell them: "cards -- even", "cards—even", "Artifact — Equipment",
# "Land - Mountain", "(13 – 3)". Spaces before a dash are taken from the start of their run only
# ((?<!\s)): tried from every space of a long run, with none followed by a dash, it was quadratic.
DASH = re.compile(r"(?<!\s)\s+-\s+|(?:(?<!\s)\s+)?(?:--|—|–)\s*")
ANGLED_URL = re.compile(r"<((?:https?://|www\.)[^<>\s]+)>")  # "<www.wizards.com/locator>" in the TXT editions
ITALIC_UNDERSCORES = re.compile(r"(?<![\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w])")  # "_Eighth Edition_"
LOST_CHAR = re.compile(r"(?<=\w)\?(?=\w)")  # "who?ve": a curly quote lost in the published file
LOST_DASH = re.compile(r"(?<=\s)\?(?=\s)")  # "Artifact ? Equipment": a lost dash
SPACES = re.compile(r"[ \t]+")
# "{oW}", "{oT}", "{o2}": mana symbols as the 2003 edition spells them
OLD_SYMBOL = re.compile(r"\{o([WUBRGSXYZTQ]|\d{1,2})\}")

# Citation tags. [CompRules 2007/10/01] [CR 204.1a] [D'Angelo 2007/10/20] [Future Sight FAQ 2007/05/01]
# and the broken wiki template {{CR|204.1a} (one closing brace short). The source ends with a character
# other than a space, so it cannot trade spaces with the \s+ after it (that made "[A" + spaces quadratic).
CITATION = re.compile(
    rf"\[(?P<src>[A-Z](?:[\w' .&-]*[\w'.&-])?)\s+(?P<val>\d{{4}}/\d{{2}}/\d{{2}}|{NUMBER})\]"
    rf"|\{{\{{CR\|(?P<tval>{NUMBER})\}}\}}?"
)

# Rulings-search page residue: "|", "| |  |", page header/footer.
TABLE_RESIDUE = re.compile(r"^[\s|]*$")
RULINGS_BANNER = re.compile(
    r"^\s*(?:\|\s*)?This search based on the (?P<date>[A-Z][a-z]+ \d{1,2}, \d{4}) release of the Rulings\.\s*$"
)

# MediaWiki chrome as rendered to text (MediaWiki's own interface messages, not this page's words).
WIKI_CHROME = (
    "Jump to: navigation, search", "Personal tools", "Toolbox", "Navigation", "Views", "Actions",
    "Search", "What links here", "Related changes", "Special pages", "Printable version",
    "Permanent link", "Page information", "Log in", "Create account", "Main page", "Recent changes",
    "Random page", "Help", "Namespaces", "Variants", "More", "Tools", "Contents", "[edit]", "edit",
)
WIKI_FROM = re.compile(r"^From [A-Z][\w ]*$")  # "From Rules": the site tagline under the title
IMAGE_NAME = re.compile(r"^[\w .()'-]+\.(?:png|jpe?g|gif|svg|webp)$", re.I)  # "Banner.png"
WIKI_NOTICE = re.compile(r"current as of Comprehensive Rules (?P<month>[A-Z][a-z]+) (?P<year>\d{4})")
# "1. Artifacts --- updated by X". One \s after the number, not \s+: ".+" takes the other spaces (a line has
# no \n), and the two trading a long run of spaces was quadratic.
EDITOR_SUMMARY = re.compile(r"^\s*\d+\.\s.+\s-{2,3}\s+updated by\s+.+$")
EXAMPLE_START = re.compile(r"^(?:Examples?|EXAMPLES?)[.:]")  # "Example: An ability ..." / wiki "Example. An ..."
SHORT_TITLE = re.compile(r"^[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|of|the|and|a|an|in|to))*$")  # "Opal Acrolith"

# Markdown export
# "## 205.1. Title ##": the marks and the spaces after them. The title runs to the closing #s and spaces
# (markdown.heading_span): "(?P<text>.*?)\s*#*\s*$" said the same, in time cubic in a run of spaces.
MD_HEADING = re.compile(r"^(?P<marks>#{1,6})\s+")
MD_RULE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")  # ---
# *Chapter: ...*  **bold**. Matched whole (fullmatch) as here; found inside a line by markdown.unemphasize, which
# finds the same matches without looking for a closing mark to the end of the line from every opening one.
MD_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1")
MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!])")

# References inside rule text: "rule 409", "rules 212.2h-k", "rule 212.2h through rule 212.2k", "section 3".
REFERENCE_WORDS = {"rule", "rules", "section", "sections", "see", "and", "or", "through", "to", "in"}
SUBRULE_LETTERS = "abcdefghijkmnpqrstuvwxyz"  # subrules skip "l" and "o"

# Wording the rules changed wholesale (2009: "play" -> "cast", "in play" -> "on the battlefield";
# 2020: "his or her" -> "their"; 2024: "tribal" -> "kindred"). Both sides of a comparison are folded
# the same way, only to *score* candidate matches; diffs always show the real words.
TERMINOLOGY = (
    ("comes into play", "enters the battlefield"), ("come into play", "enter the battlefield"),
    ("came into play", "entered the battlefield"), ("coming into play", "entering the battlefield"),
    ("leaves play", "leaves the battlefield"), ("left play", "left the battlefield"),
    ("into play", "onto the battlefield"), ("in play", "on the battlefield"),
    ("removed from the game", "exiled"), ("remove from the game", "exile"), ("removes from the game", "exiles"),
    ("his or her", "their"), ("he or she", "they"), ("him or her", "them"),
    ("tribals", "kindreds"), ("tribal", "kindred"),
    ("played", "cast"), ("playing", "casting"), ("plays", "casts"), ("play", "cast"),
)
NUMBER_IN_TEXT = re.compile(rf"\b{NUMBER_OR_RANGE}\b")  # rule numbers a text cites

# A citation of the rules in a text `cite` rewrites, each form with its example:
#   tag "[CR 204.1a]" / "[Comprehensive Rules 702.19b]", template "{{CR|204.1a}}" (or one brace short),
#   prose "rule 204.1a", "CR 205.1A", "rules 113 and 114", "rules 702.19b-c", "rule 212.2h through rule 212.2k",
#   bare "(see 702.19b)": a dotted number alone (a bare "100" is not a rule: "100 life").
# A number ends where no letter or digit follows ("rule 2011" is a year, not rule 201).
# A number as people cite it differs from NUMBER_OR_RANGE as printed, on purpose (kept apart): a capital
# subrule letter ("CR 205.1A", lookup.normalise lowers it) and an en dash in a range ("702.19b–c").
CITED_RANGE = r"[-–][a-z]"  # "-c" or "–c" in 702.19b-c
CITED_NUMBER_ONLY = re.compile(rf"{CHAPTER_NUMBER}(?:\.\d+[a-zA-Z]?(?:{CITED_RANGE})?)?")  # 205.1A, 702.19b–c
CITED_NUMBER = rf"{CITED_NUMBER_ONLY.pattern}(?![\w])(?!\.\d)"
CITE = re.compile(
    rf"\[(?:CR|CompRules|Comp\.? ?Rules|Comprehensive Rules)\s+(?P<tag>{CITED_NUMBER})\]"
    rf"|\{{\{{CR\|(?P<template>{CITED_NUMBER})\}}\}}?"
    rf"|\b(?P<prose>(?:CR|[Rr]ules?)\s+{CITED_NUMBER}"
    rf"(?:(?:,\s*|,?\s+(?:and|or|through|to)\s+(?:rules?\s+)?){CITED_NUMBER})*)"
    rf"|(?<![\w.$€£])(?P<bare>{DOTTED_NUMBER}(?:{CITED_RANGE})?)(?![\w])(?!\.\d)")
# One word shaped like a file name: "./notes.txt", "wiki/204.html" ("see rule 204.1a" is text)
LOOKS_LIKE_A_PATH = re.compile(r"\S*(?:/\S*|\.(?:txt|md|html?|rtf|docx?|pdf|csv|json))")
