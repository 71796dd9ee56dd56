#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write one manual page (section 3) per public function, from the Doxygen comments of
the public headers, plus one page per header (mpix_<module>) from its @file comment.

    man_pages.py --list HEADER...            print the page file names, one per line
    man_pages.py --out DIR --version V HEADER...   write them into DIR

The comments follow one convention (@brief, @param[in|out] name text, @p name, `code`,
@return, @par Title, @note, @see, "- " lists); anything else is kept as text."""
import argparse
import os
import re
import sys

DECLARATION = re.compile(r"^\s*(?:[A-Za-z_][\w\s\*]*?[\s\*])?(\w+)\s*\(", re.S)


def comment_lines(block):
    """The text of a /** ... */ block, without the comment markers."""
    body = block[3:-2]
    lines = []
    for line in body.split("\n"):
        stripped = re.sub(r"^\s*\* ?", "", line) if re.match(r"^\s*\*", line) else line.strip()
        lines.append(stripped.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def parse_header(path):
    """(file comment lines, [(name, comment lines, declaration text)]) of one header."""
    text = open(path, encoding="utf-8").read()
    file_comment = []
    functions = []
    for match in re.finditer(r"/\*\*.*?\*/", text, re.S):
        lines = comment_lines(match.group(0))
        if any(line.startswith("@file") for line in lines):
            file_comment = [line for line in lines if not line.startswith("@file")]
            continue
        rest = text[match.end():]
        # The declaration that follows: up to the first ';' or '{' at depth zero.
        end = re.search(r"[;{]", rest)
        if not end:
            continue
        declaration = rest[:end.start()].strip()
        if declaration.startswith(("#", "typedef", "struct", "enum", "/*")) or "(" not in declaration:
            continue
        name_match = DECLARATION.match(declaration)
        if not name_match or not re.match(r"(MPIX_|Wrapper_)", name_match.group(1)):
            continue
        declaration = re.sub(r"\s+", " ", declaration) + ";"
        functions.append((name_match.group(1), lines, declaration))
    return file_comment, functions


def roff_escape(text):
    text = text.replace("\\", "\\e")
    text = re.sub(r"^([.'])", r"\\&\1", text)
    return text


def inline(text):
    """Doxygen and Markdown inline markup to roff fonts."""
    text = roff_escape(text)
    text = re.sub(r"@p\s+(\w+)", r"\\fI\1\\fP", text)
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fP", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fP", text)
    text = re.sub(r"@(?:c|ref)\s+(\S+)", r"\\fB\1\\fP", text)
    return text


def paragraphs(lines):
    """Group lines into ('text', str), ('item', str) and ('code', [lines]) blocks."""
    blocks = []
    current = None
    in_code = False
    for line in lines:
        if line.strip().startswith("@code"):
            in_code = True
            blocks.append(("code", []))
            current = None
            continue
        if line.strip().startswith("@endcode"):
            in_code = False
            continue
        if in_code:
            blocks[-1][1].append(line)
            continue
        stripped = line.strip()
        if not stripped:
            current = None
            continue
        if stripped.startswith("- "):
            current = ["item", stripped[2:]]
            blocks.append(current)
        elif current is not None and (line.startswith(" ") or current[0] == "text"):
            current[1] += " " + stripped
        else:
            current = ["text", stripped]
            blocks.append(current)
    return blocks


def render_blocks(lines):
    out = []
    for kind, content in paragraphs(lines):
        if kind == "code":
            out += [".PP", ".nf", ".RS"] + [roff_escape(line) for line in content] + [".RE", ".fi"]
        elif kind == "item":
            out += [".IP \\(bu 2", inline(content)]
        else:
            out += [".PP", inline(content)]
    return out


def split_sections(lines):
    """The comment as (title, lines) sections: brief, description, params, return, @par ..."""
    sections = {"brief": [], "description": [], "params": [], "return": [], "see": []}
    extra = []  # (title, lines) of @par and @note, in order
    target = sections["description"]
    for line in lines:
        stripped = line.strip()
        tag = re.match(r"@(\w+)(\[[\w,]+\])?\s*(.*)", stripped)
        if tag:
            word, direction, rest = tag.group(1), tag.group(2), tag.group(3)
            if word == "brief":
                target = sections["brief"]
                target.append(rest)
                continue
            if word == "param":
                name, _, text = rest.partition(" ")
                sections["params"].append([name, (direction or "").strip("[]"), text.strip()])
                target = None
                continue
            if word in ("return", "returns", "retval"):
                target = sections["return"]
                target.append(rest)
                continue
            if word == "par":
                # "@par Complexity one MPI_Allreduce" keeps the text on the title line.
                title, _, text = rest.partition(" ")
                known = re.match(r"(Complexity|Errors|Hints|Consistency|Files|Thread safety|Progress)\b(.*)", rest)
                if known:
                    title, text = known.group(1), known.group(2).strip()
                else:
                    title, text = rest, ""
                extra.append((title, [text] if text else []))
                target = extra[-1][1]
                continue
            if word == "note":
                extra.append(("Note", [rest]))
                target = extra[-1][1]
                continue
            if word in ("see", "sa"):
                sections["see"].append(rest)
                target = None
                continue
            if word in ("code", "endcode") and target is not None:
                target.append(stripped)
                continue
        if target is None:
            if sections["params"] and stripped:
                sections["params"][-1][2] += " " + stripped
            continue
        if not stripped and target is sections["brief"]:
            target = sections["description"]
            continue
        target.append(line)
    return sections, extra


def header_of(path):
    return "mpix/" + os.path.basename(path)


def module_page(path):
    return "mpix_" + os.path.splitext(os.path.basename(path))[0]


def page_head(name, version, summary):
    return ['.\\" Generated by tools/man_pages.py from the public headers; do not edit.',
            '.TH "%s" 3 "" "mpix %s" "mpix"' % (name, version),
            ".SH NAME",
            "%s \\- %s" % (name, inline(summary))]


def function_page(path, name, lines, declaration, siblings, version):
    sections, extra = split_sections(lines)
    brief = " ".join(line.strip() for line in sections["brief"]).rstrip(".") or name
    out = page_head(name, version, brief)
    out += [".SH SYNOPSIS", ".nf", "#include <%s>" % header_of(path), ".sp", roff_escape(declaration), ".fi"]
    if any(line.strip() for line in sections["description"]):
        out += [".SH DESCRIPTION"] + render_blocks(sections["description"])
    if sections["params"]:
        out.append(".SH PARAMETERS")
        for param_name, direction, text in sections["params"]:
            label = "\\fI%s\\fP" % roff_escape(param_name)
            if direction:
                label += " [%s]" % direction
            out += [".TP", label, inline(text)]
    if sections["return"]:
        out += [".SH RETURN VALUE"] + render_blocks(sections["return"])
    for title, body in extra:
        out += [".SH %s" % title.upper()] + render_blocks(body)
    see = ["%s(3)" % module_page(path)] + ["%s(3)" % other for other in siblings if other != name]
    out += [".SH SEE ALSO", ", ".join("\\fB%s\\fP" % entry for entry in see)]
    return "\n".join(out) + "\n"


def overview_page(path, file_comment, names, version):
    sections, extra = split_sections(file_comment)
    brief = " ".join(line.strip() for line in sections["brief"]).rstrip(".") or header_of(path)
    name = module_page(path)
    out = page_head(name, version, brief)
    out += [".SH SYNOPSIS", ".nf", "#include <%s>" % header_of(path), ".fi"]
    if any(line.strip() for line in sections["description"]):
        out += [".SH DESCRIPTION"] + render_blocks(sections["description"])
    for title, body in extra:
        out += [".SH %s" % title.upper()] + render_blocks(body)
    if names:
        out += [".SH FUNCTIONS", ", ".join("\\fB%s\\fP(3)" % other for other in names)]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("--version", default="")
    parser.add_argument("headers", nargs="+")
    args = parser.parse_args()

    pages = {}
    for path in args.headers:
        file_comment, functions = parse_header(path)
        names = []
        for name, _, _ in functions:
            if name not in names:
                names.append(name)
        for name, lines, declaration in functions:
            if name + ".3" not in pages:  # C++ overloads share the C function's page
                pages[name + ".3"] = function_page(path, name, lines, declaration, names, args.version)
        if file_comment or names:
            pages[module_page(path) + ".3"] = overview_page(path, file_comment, names, args.version)

    if args.list:
        print("\n".join(sorted(pages)))
        return 0
    os.makedirs(args.out, exist_ok=True)
    for file_name, text in pages.items():
        with open(os.path.join(args.out, file_name), "w", encoding="utf-8") as page:
            page.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
