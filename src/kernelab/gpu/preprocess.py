"""The little of the C preprocessor that reading kernel signatures needs (params.parse_signatures).

A module's entry points can sit in the files it includes, and behind #if blocks that the
defines and the files' own #define lines decide (softmax/v4_dispatch.cu defines
SOFTMAX_NO_ENTRY_POINTS, then includes v0..v13, whose entry points are `#ifndef` it). So the
text is read as the compiler reads it:

- `#include "name"` of a local file is read in place, once per module (as `#pragma once` or an
  include guard would have it; a cycle ends there). The search is the compiler's (compiler.py):
  the top-level source looks in `include_dirs` (compile_file puts the file's own folder first),
  an included file in its own folder first, then in `include_dirs`. `#include <...>` is not
  read, and neither is a quoted name found in none of those folders: the compiler found it
  elsewhere (the toolkit's headers), or it has already said that it is missing; either way no
  entry point of ours is in it.
- #if / #ifdef / #ifndef / #elif / #else / #endif are decided with three values: true, false
  and "cannot tell". What cannot be decided on the host is kept, every branch of it, as if
  there were no #if: `__CUDA_ARCH__` (one compile per arch; the signatures cover them all), a
  name the files never #define (it may come from a system header) used as a number, a
  function-like macro. `defined(NAME)` of such a name is false, except for reserved names
  (`__NAME`, `_Name`), which the compiler and its headers define.
- #define / #undef are followed in order; `defines` come first, as -D options do.

Not done: function-like macro expansion, token pasting, #line, character literals in #if.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

_INCLUDE = re.compile(r'^\s*"([^"]+)"')
_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)(.*)$")
_DEFINE = re.compile(r"^\s*(\w+)(\()?(.*)$")
_TOKEN = re.compile(r"\s*((?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*|[A-Za-z_]\w*|\|\||&&|==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^()?:])")

# What a name is, as far as the reader knows, where it is not an object-like macro's body (a str).
UNDEFINED = object()  # #undef'd
UNKNOWN = object()  # #define'd or #undef'd on a line the reader cannot tell counts
FUNCTION = object()  # a function-like macro: defined, but its value needs arguments
_OPS = {"|": operator.or_, "^": operator.xor, "&": operator.and_, "==": operator.eq, "!=": operator.ne,
        "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "<<": operator.lshift,
        ">>": operator.rshift, "+": operator.add, "-": operator.sub, "*": operator.mul}


def local_include(name: str, search: list[Path]) -> Path | None:
    """The file a quoted `#include "name"` reads: the first folder of `search` that holds it."""
    for d in search:
        p = (Path(d) / name).resolve()
        if p.is_file():
            return p
    return None


def strip_comments(src: str) -> str:
    """Comments out, lines kept (a block comment leaves its newlines), continuations joined."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m[0].count("\n") or " ", src, flags=re.DOTALL)
    src = re.sub(r"//[^\n]*", " ", src)
    return re.sub(r"\\\n", " ", src)


def _and(a, b):
    return False if a is False or b is False else None if a is None or b is None else True


def _or(a, b):
    return True if a is True or b is True else None if a is None or b is None else False


def _not(a):
    return None if a is None else not a


def _reserved(name: str) -> bool:
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper())


@dataclass
class Preprocessed:
    text: str  # the lines that count (or may), of the source and its local includes; no comments or directives
    macros: dict[str, str] = field(default_factory=dict)  # object-like #defines: the first body read (defines aside)
    files: list[Path] = field(default_factory=list)  # the local files read, in order


class _Reader:
    def __init__(self, defines: dict | None, include_dirs: list[Path]):
        self.include_dirs = include_dirs
        self.defines = dict(defines or {})
        self.table: dict[str, object] = {}  # name -> body (str), or UNDEFINED / UNKNOWN / FUNCTION
        self.first: dict[str, str] = {}  # name -> the first #define body read, for parameter types
        for k, v in (defines or {}).items():
            self.table[k] = "1" if v is None else str(v)  # -DNAME means 1
        self.stack: list[list] = []  # per open #if: [state outside it, a branch taken (tri), this branch (tri)]
        self.out: list[str] = []
        self.files: list[Path] = []

    def state(self):
        """Whether the current line counts: True, False, or None (cannot tell: it is kept)."""
        return _and(self.stack[-1][0], self.stack[-1][2]) if self.stack else True

    def read(self, text: str, search: list[Path]) -> None:
        depth = len(self.stack)
        for line in strip_comments(text).split("\n"):
            m = _DIRECTIVE.match(line)
            if m:
                self.directive(m[1], m[2].strip(), search)
            elif self.state() is not False:
                self.out.append(line)
        del self.stack[depth:]  # an #if left open at the end of a file closes with it

    def directive(self, kw: str, rest: str, search: list[Path]) -> None:
        state = self.state()
        if kw in ("if", "ifdef", "ifndef"):
            if state is False:
                cond = False
            elif kw == "if":
                cond = self.condition(rest)
            else:
                cond = self.defined(rest.split()[0]) if rest.split() else None
                cond = _not(cond) if kw == "ifndef" else cond
            self.stack.append([state, cond, cond])
        elif kw == "elif" and self.stack:
            outside, taken, _ = self.stack[-1]
            if outside is False or taken is True:
                self.stack[-1][2] = False
            else:
                cond = self.condition(rest)
                self.stack[-1][2] = _and(_not(taken), cond)
                self.stack[-1][1] = _or(taken, cond)
        elif kw == "else" and self.stack:
            self.stack[-1][2] = _not(self.stack[-1][1])
            self.stack[-1][1] = True
        elif kw == "endif" and self.stack:
            self.stack.pop()
        elif state is False:
            return
        elif kw == "define":
            m = _DEFINE.match(rest)
            if not m:
                return
            name, body = m[1], FUNCTION if m[2] else m[3].strip()
            self.table[name] = body if state else UNKNOWN
            if body is not FUNCTION and name not in self.defines:
                self.first.setdefault(name, body)
        elif kw == "undef" and rest.split():
            self.table[rest.split()[0]] = UNDEFINED if state else UNKNOWN
        elif kw == "include":
            m = _INCLUDE.match(rest)
            path = local_include(m[1], search) if m else None
            if path is not None and path not in self.files:
                self.files.append(path)
                self.read(path.read_text(), [path.parent, *self.include_dirs])

    def defined(self, name: str):
        body = self.table.get(name)
        if body is None:
            return None if _reserved(name) else False
        return None if body is UNKNOWN else body is not UNDEFINED

    def condition(self, expr: str):
        value = _Expr(self, expr).value()
        return None if value is None else value != 0


class _Expr:
    """An #if expression's value: an int, or None where it cannot be told. Precedence as in C."""

    _BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
               ("+", "-"), ("*", "/", "%")]

    def __init__(self, reader: _Reader, text: str, depth: int = 0):
        self.reader, self.depth = reader, depth
        self.tokens, pos = [], 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:  # a character, string or float literal, `::`...: not something the reader evaluates
                self.tokens = None
                return
            self.tokens.append(m[1])
            pos = m.end()
        self.i = 0

    def value(self):
        if not self.tokens or self.depth > 32:
            return None
        try:
            v = self.ternary()
        except (IndexError, ValueError):
            return None
        return v if self.i == len(self.tokens) else None

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        tok = self.tokens[self.i]
        if want is not None and tok != want:
            raise ValueError(f"expected {want}")
        self.i += 1
        return tok

    def ternary(self):
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.take("?")
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        if cond is None:
            return a if a == b else None
        return a if cond else b

    def binary(self, level: int):
        if level == len(self._BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._BINARY[level]:
            op = self.take()
            right = self.binary(level + 1)
            left = self.apply(op, left, right)
        return left

    @staticmethod
    def apply(op: str, a, b):
        if op == "||":  # a known non-zero side decides, whatever the other is
            return 1 if a or b else None if a is None or b is None else 0
        if op == "&&":  # and a known zero side
            return 0 if a == 0 or b == 0 else None if a is None or b is None else 1
        if a is None or b is None:
            return None
        if op in ("/", "%"):
            if b == 0:
                return None
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates toward zero
            return q if op == "/" else a - q * b
        return int(_OPS[op](a, b))  # a negative shift raises ValueError: value() reads it as "cannot tell"

    def unary(self):
        tok = self.take()
        if tok in ("!", "-", "+", "~"):
            v = self.unary()
            return None if v is None else {"!": int(not v), "-": -v, "+": v, "~": ~v}[tok]
        if tok == "(":
            v = self.ternary()
            self.take(")")
            return v
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.take("(")
            name = self.take()
            if paren:
                self.take(")")
            d = self.reader.defined(name)
            return None if d is None else int(d)
        if tok[0].isdigit():
            digits = tok.rstrip("uUlL")
            return int(digits, 16) if digits[1:2] in ("x", "X") else int(digits, 8 if digits[0] == "0" else 10)
        if tok in ("true", "false"):
            return int(tok == "true")
        if self.peek() == "(":  # a function-like macro's call: not expanded here
            return None
        body = self.reader.table.get(tok)
        if body is UNDEFINED:
            return 0
        if body is None or body in (UNKNOWN, FUNCTION):
            return None  # never #define'd here: it may come from a header the reader does not follow
        return _Expr(self.reader, body, self.depth + 1).value()


def preprocess(source: str, defines: dict | None = None, include_dirs=()) -> Preprocessed:
    """The text of `source` as the compiler would read it, as far as the host can tell (see above)."""
    dirs = [Path(d) for d in include_dirs]
    reader = _Reader(defines, dirs)
    reader.read(source, dirs)
    return Preprocessed("\n".join(reader.out), dict(reader.first), reader.files)
