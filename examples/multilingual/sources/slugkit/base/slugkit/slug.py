import re
import unicodedata


def slugify(text, separator="-"):
    """Lower-case ASCII words of `text` joined by `separator`."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", text.lower())
    return separator.join(words)
