#!/usr/bin/env python3
"""Writes docs/api.md, the API reference, from the public headers and the
settings table:

  include/dcuda/*.h     every public function, type, macro and constant, in
                        header order, under the headers' own topics (their
                        "/* ---- topic ---- */" lines), each with the comment
                        it has in the header and its prototype(s)
  include/dcuda/shared/ the layout types and limits that a public header
                        names (dcuda_state_t, DCUDA_MAX_WINDOWS, ...), with
                        their comments
  DCUDA_STATUS_MAP      every status code with its value and message
  DCUDA_SETTINGS_MAP    every setting (src/: the table dcuda_settings_print
                        and dcuda_info list) with its type, default and meaning

A comment documents the declarations that follow it up to the next blank
line, comment or preprocessor branch that does not contain it; a comment at
the end of a #define's line documents that define. Declarations of one name
in several preprocessor branches are shown together, each under its
condition.

usage: api_ref.py [--check] [--root DIR] [--out FILE]

Without --check it writes the reference (default docs/api.md under the
repository root) and lists every public name that has no comment. With
--check it writes nothing: it regenerates the reference in memory and fails
when the file differs (naming the first differing lines) or when a public
function, type, macro, status code or setting has no comment. The exit
status is 0 when all is well, 1 otherwise. Standard library only.
"""
import argparse
import os
import re
import sys

PUBLIC_DIR = os.path.join("include", "dcuda")
SHARED_DIR = os.path.join("include", "dcuda", "shared")
OUT_DEFAULT = os.path.join("docs", "api.md")
SETTINGS_MAP = "DCUDA_SETTINGS_MAP"
STATUS_MAP = "DCUDA_STATUS_MAP"
SETTING_TYPES = {"INT": "int", "UINT": "uint", "BOOL": "0 or 1", "DOUBLE": "double",
                 "STRING": "string"}

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MARKER = re.compile(r"^/\*\s*-{3,}\s*(.*?)\s*-{3,}\s*\*/$")


# ---- reading C ----------------------------------------------------------------


def strip_code(text):
    """text with comments, strings and character constants blanked (same
    length), so that braces, parentheses and semicolons can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def comment_body(lines):
    """The text of a block comment (its lines, "/*", "*/" and the leading
    " * " taken off), as lines."""
    text = "\n".join(lines).strip()
    text = text[2:].lstrip(" ") if text.startswith("/*") else text
    text = text[:-2] if text.endswith("*/") else text
    body = []
    for ln in text.split("\n"):
        s = ln.strip()
        if s.startswith("*"):
            s = ln.lstrip()[1:]
            s = s[1:] if s.startswith(" ") else s
        else:
            s = ln.rstrip()
        body.append(s.rstrip())
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return body


class Decl:
    """One declaration of a name: kind, the text shown, the preprocessor
    condition it is under, and the comment on its own line (a #define's)."""

    def __init__(self, name, kind, text, cond, members=()):
        self.name, self.kind, self.text, self.cond = name, kind, text, cond
        self.members = list(members)  # enumerators
        self.own_comment = None


class Group:
    """Declarations that one comment documents (or none)."""

    def __init__(self, comment, depth, topic):
        self.comments = [comment] if comment else []
        self.depth, self.topic, self.decls = depth, topic, []


class Header:
    def __init__(self, path, rel):
        self.path, self.rel = path, rel
        self.intro = None  # the file's first comment
        self.items = []  # ("topic", name, [prose comments]) and ("group", Group)
        self.defined = set()


def cond_text(frames):
    """The C condition of the branch the frames describe (guards left out)."""
    parts = [f["cond"] for f in frames if not f["guard"] and f["cond"]]
    return " && ".join(parts)


def negate(c):
    m = re.fullmatch(r"defined\(\w+\)", c)
    if m:
        return "!" + c
    m = re.fullmatch(r"!(defined\(\w+\))", c)
    if m:
        return m.group(1)
    return "!(%s)" % c


def if_condition(directive, arg):
    arg = arg.strip()
    if directive == "ifdef":
        return "defined(%s)" % arg
    if directive == "ifndef":
        return "!defined(%s)" % arg
    return arg


def decl_from_statement(stmt, cond):
    """Decls of one C statement (its lines, comments included): a typedef, a
    function's prototype or definition, a tagged struct or enum; [] for
    anything else."""
    raw = "\n".join(stmt)
    code = strip_code(raw)
    flat = " ".join(code.split())
    if not flat or flat.startswith("DCUDA_STATIC_ASSERT"):
        return []
    body = code.find("{")
    if flat.startswith("typedef"):
        if body >= 0:
            close = code.rfind("}")
            tail = code[close + 1:]
            names = IDENT.findall(tail)
            if not names:
                return []
            name = names[-1]
            is_enum = re.match(r"\s*typedef\s+enum\b", code) is not None
            members = []
            if is_enum:
                members = enumerators(code[body + 1:close])
            return [Decl(name, "type", raw, cond, members)]
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)", code)
        if m:
            return [Decl(m.group(1), "type", raw, cond)]
        names = IDENT.findall(code[:code.rfind(";")])
        return [Decl(names[-1], "type", raw, cond)] if names else []
    m = re.match(r"\s*(struct|enum)\s+(\w+)\s*\{", code)
    if m:
        members = enumerators(code[body + 1:code.rfind("}")]) if m.group(1) == "enum" else []
        return [Decl(m.group(2), "type", raw, cond, members)]
    paren = code.find("(")
    if paren < 0 or (0 <= body < paren):
        return []
    names = IDENT.findall(code[:paren])
    if not names or names[-1] in ("if", "while", "for", "switch", "return", "sizeof"):
        return []
    text = raw
    if body >= 0:
        # A definition: the prototype is what comes before its body.
        text = raw[:body].rstrip() + ";"
    return [Decl(names[-1], "function", text, cond)]


def enumerators(body_code):
    """The names an enum's body declares (a macro that expands to them, as
    DCUDA_STATUS_MAP does, declares none here)."""
    body_code = "\n".join(x for x in body_code.split("\n") if not x.strip().startswith("#"))
    out = []
    for part in body_code.split(","):
        m = re.match(r"\s*([A-Za-z_]\w*)\s*(\(?)", part)
        if m and not m.group(2):
            out.append(m.group(1))
    return out


def parse_header(path, rel):
    """Reads one header into its intro, topics, prose and groups of
    declarations with their comments."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    h = Header(path, rel)
    frames = []  # {"cond": str, "guard": bool, "chain": [conds so far]}
    topic = None
    group = None
    pending = None  # (comment lines, depth)
    seen_code = False

    def flush_pending():
        nonlocal pending
        if pending is not None:
            if h.intro is None and not seen_code and not h.items:
                h.intro = pending[0]
            else:
                add_prose(pending[0])
            pending = None

    def add_prose(body):
        if h.items and h.items[-1][0] == "topic" and h.items[-1][1] == topic:
            h.items[-1][2].append(body)
        else:
            h.items.append(("topic", topic, [body]))

    def end_group():
        nonlocal group
        group = None

    def add_decls(decls):
        nonlocal group, pending
        if not decls:
            return
        if group is None:
            comment = pending[0] if pending else None
            depth = pending[1] if pending else len(frames)
            pending = None
            group = Group(comment, depth, topic)
            h.items.append(("group", group))
        group.decls.extend(decls)

    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        s = line.strip()
        if not s:
            end_group()
            flush_pending()
            i += 1
            continue
        if s.startswith("/*") or s.startswith("//"):
            j = i
            if s.startswith("/*"):
                while "*/" not in lines[j] and j + 1 < n:
                    j += 1
            block = lines[i:j + 1]
            i = j + 1
            one = " ".join(x.strip() for x in block)
            if re.match(r"^/\*\s*clang-format (on|off)\s*\*/$", one):
                continue
            m = MARKER.match(one) if len(block) == 1 else None
            end_group()
            flush_pending()
            if m:
                topic = m.group(1)
                h.items.append(("topic", topic, []))
                continue
            pending = (dedent(block), len(frames))
            continue
        if s.startswith("#"):
            # One directive with its continuation lines.
            j = i
            while lines[j].rstrip().endswith("\\") and j + 1 < n:
                j += 1
            directive_lines = lines[i:j + 1]
            i = j + 1
            m = re.match(r"#\s*(\w+)\s*(.*)", s)
            d, arg = (m.group(1), m.group(2)) if m else ("", "")
            if d in ("if", "ifdef", "ifndef"):
                guard = False
                if d == "ifndef":
                    k = i
                    while k < n and not lines[k].strip():
                        k += 1
                    guard = k < n and re.match(r"#\s*define\s+%s\s*$" % re.escape(arg.strip()),
                                               lines[k].strip()) is not None
                c = if_condition(d, strip_code(arg).strip())
                frames.append({"cond": c, "guard": guard, "chain": [c]})
                continue
            if d in ("elif", "else", "endif"):
                depth = len(frames)
                if group is not None and group.depth >= depth:
                    end_group()
                if pending is not None and pending[1] >= depth:
                    flush_pending()
                if not frames:
                    continue
                f = frames[-1]
                if d == "endif":
                    frames.pop()
                elif d == "else":
                    f["cond"] = " && ".join(negate(c) for c in f["chain"])
                else:
                    c = strip_code(arg).strip()
                    f["cond"] = " && ".join([negate(x) for x in f["chain"]] + [c])
                    f["chain"].append(c)
                continue
            if d == "define":
                dm = re.match(r"#\s*define\s+(\w+)(\([^)]*\))?", s)
                name = dm.group(1)
                if (frames and frames[-1]["guard"] and frames[-1]["cond"] == "!defined(%s)" % name) \
                        or name.endswith("_"):
                    continue  # an include guard, or a helper of the header's own
                h.defined.add(name)
                seen_code = True
                add_decls([macro_decl(name, dm.group(2), directive_lines, cond_text(frames))])
                continue
            if d == "undef":
                continue
            # include, error, pragma: nothing to document; what came before
            # them documents nothing either.
            end_group()
            flush_pending()
            continue
        if re.match(r'^extern\s+"C"\s*\{\s*$', s) or s == "}":
            i += 1
            continue
        # A C statement: up to its ';' at depth 0, or a definition's body.
        j = i
        prefix = []
        if s.startswith("template"):
            prefix = [line]
            j += 1
            i = j
        stmt = []
        while j < n:
            stmt.append(lines[j])
            j += 1
            code = strip_code("\n".join(stmt))
            depth = code.count("(") + code.count("{") - code.count(")") - code.count("}")
            flat = code.rstrip()
            if depth <= 0 and (flat.endswith(";") or ("{" in flat and flat.endswith("}"))):
                break
        i = j
        seen_code = True
        decls = decl_from_statement(prefix + stmt, cond_text(frames))
        for dcl in decls:
            h.defined.add(dcl.name)
            for mem in dcl.members:
                h.defined.add(mem)
        add_decls(decls)
    flush_pending()
    return h


def macro_decl(name, params, directive_lines, cond):
    """A #define as shown: its value when it is short, else "..."; a comment
    at the end of its line is its own."""
    joined = " ".join(x.rstrip().rstrip("\\").strip() for x in directive_lines)
    own = None
    code = strip_code(joined)
    k = code.find("/*")
    if k >= 0:
        own = comment_body([joined[k:]])
        joined = joined[:k].rstrip()
    head = "#define %s%s" % (name, params or "")
    value = joined[joined.find(name) + len(name) + len(params or ""):].strip()
    value = " ".join(value.split())
    if value.startswith("{") and value.endswith("}"):
        value = "{ " + value[1:-1].strip() + " }"
    text = head if not value else head + " " + value if len(head) + len(value) < 110 \
        else head + " ..."
    dcl = Decl(name, "macro", text, cond)
    dcl.own_comment = own
    return dcl


# ---- the model: entries per header and topic ------------------------------------


class Entry:
    def __init__(self, topic):
        self.topic = topic
        self.comments = []
        self.decls = []

    def names(self):
        out = []
        for d in self.decls:
            if d.name not in out:
                out.append(d.name)
        return out

    def documented(self, name):
        if any(comment_body(c) for c in self.comments):
            return True
        return any(d.own_comment for d in self.decls if d.name == name)


def entries_of(h, keep=None):
    """The header's items as [("topic", name, prose) | ("entry", Entry)]:
    each name once, in the entry of its first declaration, which also
    takes its later declarations (other preprocessor branches) and their
    comments. keep: the names to take (None: all)."""
    out = []
    by_name = {}
    for item in h.items:
        if item[0] == "topic":
            out.append(item)
            continue
        g = item[1]
        decls = [d for d in g.decls if keep is None or d.name in keep]
        if not decls:
            continue
        fresh = None
        for d in decls:
            e = by_name.get(d.name)
            if e is None:
                if fresh is None:
                    fresh = Entry(g.topic)
                    out.append(("entry", fresh))
                e = fresh
                by_name[d.name] = e
            e.decls.append(d)
            for c in g.comments:
                if c not in e.comments:
                    e.comments.append(c)
    return out


# ---- the status codes and the settings -------------------------------------------


def c_strings(text):
    """The C string literals of text, adjacent ones joined, with the rest
    of text between them: a list of ("str", value) and ("code", text)."""
    out = []
    i, n = 0, len(text)
    buf = []
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            val = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    val.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(nxt, nxt))
                    j += 2
                else:
                    val.append(text[j])
                    j += 1
            s = "".join(val)
            if buf and not "".join(buf).strip() and out and out[-1][0] == "str":
                out[-1] = ("str", out[-1][1] + s)  # adjacent literals join
            else:
                if buf:
                    out.append(("code", "".join(buf)))
                out.append(("str", s))
            buf = []
            i = j + 1
        else:
            buf.append(c)
            i += 1
    if buf:
        out.append(("code", "".join(buf)))
    return out


def x_map(text, map_name):
    """The argument lists of the X(...) entries of #define map_name(X): each
    a list of arguments (strings joined, code stripped)."""
    m = re.search(r"#\s*define\s+%s\(X\)" % re.escape(map_name), text)
    if not m:
        return None
    lines = text[m.end():].split("\n")
    body = [lines[0]]
    k = 0
    while body[-1].rstrip().endswith("\\") and k + 1 < len(lines):
        k += 1
        body.append(lines[k])
    joined = " ".join(x.rstrip().rstrip("\\") for x in body)
    parts = c_strings(joined)
    entries = []
    args, cur, depth = None, [], 0
    for kind, val in parts:
        if kind == "str":
            if args is not None:
                cur.append(("str", val))
            continue
        for ch in val:
            if args is None:
                if ch == "(":
                    args, cur, depth = [], [], 1
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    args.append(cur)
                    entries.append([arg_text(a) for a in args])
                    args = None
                    continue
            if ch == "," and depth == 1:
                args.append(cur)
                cur = []
            else:
                cur.append(("code", ch))
    return entries


def arg_text(parts):
    strs = [v for k, v in parts if k == "str"]
    if strs:
        return "".join(strs)
    return "".join(v for k, v in parts).strip()


def find_settings(root):
    """The file of src/ that defines the settings table, and its rows."""
    src = os.path.join(root, "src")
    for dirpath, dirnames, filenames in sorted(os.walk(src)):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith((".h", ".c")):
                continue
            p = os.path.join(dirpath, fn)
            with open(p, encoding="utf-8") as f:
                text = f.read()
            rows = x_map(text, SETTINGS_MAP)
            if rows:
                return p, rows
    return None, None


# ---- writing ---------------------------------------------------------------------


def md_cell(text):
    """Text for a cell of a Markdown table, as written."""
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("*", "\\*"), ("_", "\\_"), ("<", "\\<"),
                 (">", "\\>"), ("\n", " ")):
        text = text.replace(a, b)
    return text


def dedent(lines):
    """Lines without the indentation they share, as a tuple."""
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return tuple(x[indent:].rstrip() for x in lines)


def render_decls(decls):
    """The declarations of an entry, each text once: a text that appears
    under several conditions is shown without them, one under a single
    condition inside #if / #else / #endif."""
    texts = []
    conds = {}
    for d in decls:
        if d.text not in conds:
            texts.append(d)
            conds[d.text] = []
        if d.cond not in conds[d.text]:
            conds[d.text].append(d.cond)
    out = []
    current = ""
    for d in texts:
        cs = conds[d.text]
        c = cs[0] if len(cs) == 1 else ""
        if c != current:
            if current and c and c == negate(current):
                out.append("#else")
            else:
                if current:
                    out.append("#endif")
                if c:
                    out.append("#if " + c)
            current = c
        text_lines = list(dedent(d.text.split("\n")))
        if d.own_comment:
            text_lines[-1] += " /* %s */" % " ".join(d.own_comment)
        out.extend(text_lines)
    if current:
        out.append("#endif")
    return out


def kind_of(entry, name):
    for d in entry.decls:
        if d.name == name:
            return d.kind
    return "enumerator"


def code_block(lines):
    return ["", "```c"] + list(lines) + ["```"]


class Doc:
    """The reference being written: its body, index, anchors and the
    names found without a comment."""

    def __init__(self):
        self.body, self.index, self.missing = [], [], []
        self.anchored = set()
        self.anchors = {}

    def anchor(self, name):
        return self.anchors.get(name, name.lower())

    def plan_anchors(self, names):
        """One anchor a name, unique without regard to case: a macro that
        shares a function's name (DCUDA_KERNEL_REF, dcuda_kernel_ref) has
        "-macro" added."""
        lowered = {}
        for x in sorted(set(names)):
            lowered.setdefault(x.lower(), []).append(x)
        for low, xs in lowered.items():
            for x in xs:
                clash = len(xs) > 1 and x.upper() == x
                self.anchors[x] = low + "-macro" if clash else low

    def entry(self, h, e, status_rows):
        names = e.names()
        members = [m for d in e.decls for m in d.members if m not in names]
        ids = "".join('<a id="%s"></a>' % self.anchor(x) for x in names + members
                      if x not in self.anchored)
        self.anchored.update(names + members)
        self.body.append("")
        self.body.append(ids + "**%s**" % ", ".join("`%s`" % x for x in names))
        lines = []
        for c in e.comments:
            lines.extend(c)
        lines.extend(render_decls(e.decls))
        self.body.extend(code_block(lines))
        for x in names:
            self.index.append((x, kind_of(e, x), h.rel, e.topic))
            if not e.documented(x):
                self.missing.append("%s: %s %s has no comment" % (h.rel, kind_of(e, x), x))
        for x in members:
            self.index.append((x, "enumerator", h.rel, e.topic))
            if not e.documented(x):
                self.missing.append("%s: enumerator %s has no comment" % (h.rel, x))
        if "dcuda_status_t" in names:
            self.status_table(h, status_rows)

    def status_table(self, h, rows):
        self.body.append("")
        self.body.append('<a id="status-codes"></a>The status codes (`DCUDA_STATUS_MAP`: '
                         "`dcuda_status_name` returns the name, `dcuda_status_string` the "
                         "message; `docs/troubleshooting.md` says what to do about each):")
        self.body.append("")
        self.body.append("| status | value | message |")
        self.body.append("|---|---|---|")
        for row in rows:
            name, value, msg = (list(row) + ["", "", ""])[:3]
            self.body.append("| `DCUDA_%s` | %s | %s |" % (name, value, md_cell(msg)))
            self.index.append(("DCUDA_" + name, "status", h.rel, None))
            if not msg.strip():
                self.missing.append("%s: status DCUDA_%s has no message" % (h.rel, name))

    def header(self, h, title, level, keep=None, status_rows=()):
        """A header's section: its intro, then its topics (### headings)
        with their prose and entries. keep: only these names, without
        intro, prose or topics (the layout headers)."""
        self.body.append("")
        self.body.append("#" * level + " " + title)
        if keep is None and h.intro:
            self.body.extend(code_block(h.intro))
        shown = None
        for item in entries_of(h, keep):
            if item[0] == "entry":
                self.entry(h, item[1], status_rows)
                continue
            if keep is not None:
                continue
            _, topic, prose = item
            if topic is not None and topic != shown:
                self.body.append("")
                self.body.append("#" * (level + 1) + " " + topic)
                shown = topic
            for p in prose:
                self.body.extend(code_block(p))


def generate(root):
    """The reference's text, and the public names without a comment."""
    inc = os.path.join(root, PUBLIC_DIR)
    publics = sorted(fn for fn in os.listdir(inc)
                     if fn.endswith(".h") and os.path.isfile(os.path.join(inc, fn)))
    headers = [parse_header(os.path.join(inc, fn), "dcuda/" + fn) for fn in publics]
    public_text = ""
    for h in headers:
        with open(h.path, encoding="utf-8") as f:
            public_text += f.read() + "\n"
    public_words = set(IDENT.findall(public_text))
    public_names = set().union(*(h.defined for h in headers))

    # The layout headers: what of theirs the public headers name.
    shared = []
    shared_dir = os.path.join(root, SHARED_DIR)
    for fn in sorted(os.listdir(shared_dir)):
        if fn.endswith(".h"):
            sh = parse_header(os.path.join(shared_dir, fn), "dcuda/shared/" + fn)
            keep = set(x for x in (sh.defined & public_words) - public_names
                       if x.lower().startswith("dcuda_"))
            if keep:
                # Their fields are the layout's: the type alone is shown.
                for item in sh.items:
                    for d in item[1].decls if item[0] == "group" else ():
                        if d.kind == "type" and d.name in keep and "{" in d.text:
                            m = re.match(r"\s*typedef\s+(struct|enum)\s+(\w+)", d.text)
                            if m:
                                d.text = "typedef %s %s { ... } %s;" % (m.group(1), m.group(2),
                                                                       d.name)
                            d.members = []
                shared.append((sh, keep))

    status_rows = x_map(public_text, STATUS_MAP) or []
    settings_path, settings_rows = find_settings(root)
    rel_settings = (os.path.relpath(settings_path, root).replace(os.sep, "/")
                    if settings_path else "src/")

    doc = Doc()
    all_names = set(public_names) | set("DCUDA_" + r[0] for r in status_rows)
    for sh, keep in shared:
        all_names |= keep
    doc.plan_anchors(all_names)

    for h in headers:
        doc.header(h, "`%s`" % h.rel, 2, status_rows=status_rows)
    layout_title = "Layout types and limits the public headers name"
    if shared:
        doc.body.append("")
        doc.body.append("## " + layout_title)
        doc.body.append("")
        doc.body.append("The public headers name these from `dcuda/shared/`, the layouts that "
                        "ranks, host and proxy share; the rest of those headers is the "
                        "implementation's, and so are the types' fields.")
        for sh, keep in shared:
            doc.header(sh, "`%s`" % sh.rel, 3, keep)

    body = doc.body
    body.append("")
    body.append("## Settings")
    body.append("")
    if settings_rows is None:
        doc.missing.append("src/: no settings table (#define %s(X))" % SETTINGS_MAP)
        settings_rows = []
    body.append("Each setting `NAME` is read from the environment variable `DCUDA_NAME` and "
                "from the argument `--dcuda-name=value`, which wins. The table is "
                "`%s` in `%s`; `dcuda_settings_print`, `dcuda_setting_describe` and "
                "`dcuda_info` list the same, and the README's Settings section says more "
                "of each." % (SETTINGS_MAP, rel_settings))
    body.append("")
    body.append("| variable | argument | type | default | meaning |")
    body.append("|---|---|---|---|---|")
    for row in settings_rows:
        field, name, typ, default, desc = (list(row) + [""] * 5)[:5]
        arg = "--dcuda-" + name.lower().replace("_", "-")
        body.append('| <a id="setting-%s"></a>`DCUDA_%s` | `%s=` | %s | %s | %s |' % (
            ("DCUDA_" + name).lower(), name, arg, SETTING_TYPES.get(typ, typ.lower()),
            "`%s`" % default if default else "(empty)", md_cell(desc)))
        doc.index.append(("DCUDA_" + name, "setting", rel_settings, None))
        if not desc.strip():
            doc.missing.append("%s: setting DCUDA_%s has no description" % (rel_settings, name))

    links = ["[`%s`](#%s)" % (h.rel, gh_anchor("`%s`" % h.rel)) for h in headers]
    if shared:
        links.append("[layout types](#%s)" % gh_anchor(layout_title))
    links += ["[status codes](#status-codes)", "[settings](#settings)"]
    head = [
        "# dcuda API reference",
        "",
        "Generated by `tools/api_ref.py` from the public headers (`include/dcuda/*.h`), "
        "the layout types and limits they name (`include/dcuda/shared/`) and the settings "
        "table. Do not edit it by hand: `make api` writes it again, and the test "
        "`docs.api` fails when it is stale or when a public name has no comment.",
        "",
        "Each entry is the header's comment and the declaration as the header has it (a "
        "definition's prototype; a macro's value when it is short), inside the header's "
        "preprocessor condition where it has one. The README's API overview says the "
        "same in short, `docs/limitations.md` what the calls do not do, and "
        "`docs/troubleshooting.md` what to do about each error.",
        "",
        "Contents: " + ", ".join(links) + ".",
        "",
        "## Index",
        "",
        "| name | kind | header | topic |",
        "|---|---|---|---|",
    ]
    seen = set()
    for name, kind, where, topic in sorted(doc.index,
                                           key=lambda r: (r[0].lower(), r[0], r[2])):
        if (name, where) in seen:
            continue
        seen.add((name, where))
        target = {"status": "status-codes", "setting": "setting-" + name.lower()}.get(kind,
                                                                         doc.anchor(name))
        head.append("| [`%s`](#%s) | %s | `%s` | %s |" % (name, target, kind, where,
                                                        md_cell(topic or "")))
    return "\n".join(head + body) + "\n", doc.missing


def gh_anchor(title):
    """The anchor GitHub gives a heading."""
    t = title.strip().lower()
    t = re.sub(r"[^\w\- ]", "", t)
    return t.replace(" ", "-")


def first_difference(old, new):
    a, b = old.split("\n"), new.split("\n")
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else None
        y = b[k] if k < len(b) else None
        if x != y:
            return k + 1, x, y
    return None


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; fail when the reference is stale or a public name "
                    "has no comment")
    ap.add_argument("--root", default=os.path.dirname(here),
                    help="the repository (default: the one this script is in)")
    ap.add_argument("--out", help="the reference (default: docs/api.md in the repository)")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    out = args.out or os.path.join(root, OUT_DEFAULT)
    shown = os.path.relpath(out, root) if out.startswith(root + os.sep) else out
    text, missing = generate(root)
    failed = False
    if args.check:
        try:
            with open(out, encoding="utf-8") as f:
                old = f.read()
        except OSError as e:
            print("api_ref: %s: %s (make api writes it)" % (shown, e.strerror))
            old = None
            failed = True
        if old is not None and old != text:
            line, x, y = first_difference(old, text)
            print("api_ref: %s is stale (make api writes it again); the first difference "
                  "is at line %d:" % (shown, line))
            print("  %s: %s" % (shown, "(end of file)" if x is None else x))
            print("  generated: %s" % ("(end of file)" if y is None else y))
            failed = True
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print("api_ref: wrote %s" % shown)
    for m in missing:
        print("api_ref: undocumented: %s" % m)
    if missing:
        failed = True
        print("api_ref: %d public name(s) without a comment: add one where the name is "
              "declared (a header, or the settings table), then make api" % len(missing))
    if args.check and not failed:
        print("api_ref: %s is current, and every public name has a comment" % shown)
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.version_info < (3, 6):
        print("SKIP: tools/api_ref.py needs python 3.6 or newer")
        sys.exit(77)
    sys.exit(main(sys.argv[1:]))
