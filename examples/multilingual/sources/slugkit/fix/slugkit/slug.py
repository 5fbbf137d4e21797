import re
import unicodedata


def slugify(text, separator="-", max_length=None):
    """Lower-case ASCII words of `text` joined by `separator`, at most `max_length` characters."""
    if max_length is not None and max_length <= 0:
        raise ValueError("max_length must be positive")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", text.lower())
    if max_length is None:
        return separator.join(words)
    if not words:
        return ""
    slug = words[0][:max_length]
    for word in words[1:]:
        candidate = slug + separator + word
        if len(candidate) > max_length:
            break
        slug = candidate
    return slug
