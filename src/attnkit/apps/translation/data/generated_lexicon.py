"""The vocabulary of the generated corpus (:mod:`attnkit.apps.translation.data.generated`):
English and German words side by side, with what German grammar needs (gender, plural,
participle, the clause order a connector asks for)."""

from __future__ import annotations

SIZES = [("big", "groß"), ("small", "klein"), ("old", "alt"), ("new", "neu")]
COLOURS = [
    ("red", "rot"), ("blue", "blau"), ("green", "grün"), ("yellow", "gelb"), ("black", "schwarz"),
    ("white", "weiß"),
]  # fmt: skip
ADJECTIVES = SIZES + COLOURS
# English singular, plural; German singular, plural, gender; animate (may sleep, see, say).
NOUNS = [
    ("dog", "dogs", "Hund", "Hunde", "m", True),
    ("cat", "cats", "Katze", "Katzen", "f", True),
    ("bird", "birds", "Vogel", "Vögel", "m", True),
    ("horse", "horses", "Pferd", "Pferde", "n", True),
    ("mouse", "mice", "Maus", "Mäuse", "f", True),
    ("fox", "foxes", "Fuchs", "Füchse", "m", True),
    ("house", "houses", "Haus", "Häuser", "n", False),
    ("car", "cars", "Auto", "Autos", "n", False),
    ("book", "books", "Buch", "Bücher", "n", False),
    ("table", "tables", "Tisch", "Tische", "m", False),
    ("lamp", "lamps", "Lampe", "Lampen", "f", False),
    ("apple", "apples", "Apfel", "Äpfel", "m", False),
    ("flower", "flowers", "Blume", "Blumen", "f", False),
    ("chair", "chairs", "Stuhl", "Stühle", "m", False),
    ("ball", "balls", "Ball", "Bälle", "m", False),
    ("cup", "cups", "Tasse", "Tassen", "f", False),
]
ANIMATE = [n for n in NOUNS if n[5]]
INTRANSITIVE = [
    ("sleeps", "schläft"), ("sings", "singt"), ("waits", "wartet"), ("laughs", "lacht"),
    ("dances", "tanzt"),
]  # fmt: skip
# present English, present German, English participle, German participle
TRANSITIVE = [
    ("sees", "sieht", "seen", "gesehen"), ("buys", "kauft", "bought", "gekauft"),
    ("finds", "findet", "found", "gefunden"), ("paints", "malt", "painted", "gemalt"),
    ("washes", "wäscht", "washed", "gewaschen"),
]  # fmt: skip
SAYING = [("says", "sagt"), ("thinks", "glaubt"), ("knows", "weiß")]
PREPOSITIONS = [("next to", "neben"), ("behind", "hinter"), ("under", "unter"), ("with", "mit")]
ADVERBS = [("today", "heute"), ("now", "jetzt")]
# English, German (with its comma), order of the clause that follows: "sub" = verb-final,
# "same" = the order of the clause before.
CONNECTORS = [
    ("and", "und", "same"), ("but", ", aber", "main"), ("because", ", weil", "sub"),
    ("although", ", obwohl", "sub"), ("while", ", während", "sub"),
]  # fmt: skip
THAT = ("that", ", dass", "sub")
ARTICLES = {
    "nom": {"m": "der", "f": "die", "n": "das"},
    "acc": {"m": "den", "f": "die", "n": "das"},
    "dat": {"m": "dem", "f": "der", "n": "dem"},
}
KINDS = ("intr", "cost", "pres", "perf") * 3 + ("say",)  # clause kinds, weights 3:3:3:3:1
