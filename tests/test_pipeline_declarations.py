"""The pipeline's targets in the languages tree-sitter parses (pipeline/declarations.py): per
language a function, a method in its class (impl, receiver type), something nested, with their
qualified names, kinds and line spans; and the skeleton line the model chooses from."""

from __future__ import annotations

import pytest

from swe_aci.pipeline.localize import skeleton
from swe_aci.pipeline.structure import targets

JAVASCRIPT = """import { helper } from './helper.js';

const LIMIT = 10;

export function clamp(value) {
  return Math.min(value, LIMIT);
}

const double = (x) => x * 2;

class Stack {
  items = [];

  push(item) {
    function inner() {}
    this.items.push(item);
  }
}
"""

TYPESCRIPT = """export interface Shape {
  area(): number;
}

export class Circle implements Shape {
  private radius: number = 1;

  area(): number {
    return Math.PI * this.radius ** 2;
  }
}

export function total(shapes: Shape[]): number {
  return shapes.reduce((sum, shape) => sum + shape.area(), 0);
}

namespace Geometry {
  export function origin(): number[] { return [0, 0]; }
}
"""

GO = """package stack

import "errors"

var ErrEmpty = errors.New("empty")

type Stack struct {
\titems []int
}

func (s *Stack) Pop() (int, error) {
\tif len(s.items) == 0 {
\t\treturn 0, ErrEmpty
\t}
\treturn s.items[0], nil
}

func New(items ...int) *Stack {
\tpush := func(x int) {}
\t_ = push
\treturn &Stack{items: items}
}
"""

RUST = """use std::fmt;

const MAX: usize = 8;

pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop()
    }
}

mod helpers {
    pub fn twice(x: i32) -> i32 {
        x * 2
    }
}
"""

JAVA = """package stack;

import java.util.ArrayList;

public class Stack {
    private final ArrayList<Integer> items = new ArrayList<>();

    public Stack() {}

    @Override
    public int pop() {
        return items.remove(0);
    }

    static class Node {
        int value() { return 1; }
    }
}
"""

C = """#include <stdlib.h>

struct stack {
    int *items;
    size_t size;
};

static int *top(struct stack *s) {
    return s->items + s->size;
}

int pop(struct stack *s)
{
    return s->items[--s->size];
}
"""

CPP = """#include <vector>

namespace ds {
class Stack {
  public:
    int pop() {
        int last = items.back();
        return last;
    }
    std::vector<int> items;
};
}

int ds::helper(int x) { return x; }

template <typename T>
T twice(T x) { return x + x; }
"""

RUBY = """require "set"

module Collections
  class Stack
    LIMIT = 10

    def pop
      @items.shift
    end

    def self.build(items)
      new(items)
    end
  end
end

def helper(x, y)
  x + y
end
"""

PHP = """<?php
namespace App;

function helper($x) {
    return $x;
}

class Stack {
    private $items = [];

    public function pop() {
        return array_shift($this->items);
    }
}
"""

# (path, source, the targets as (kind, qualified name, first line, last line), in order)
CASES = {
    "javascript": ("lib/stack.js", JAVASCRIPT, [
        ("function", "clamp", 5, 7),
        ("function", "double", 9, 9),
        ("function", "Stack.push", 14, 17),
        ("assignment", "LIMIT", 3, 3),
        ("class", "Stack", 11, 12),
    ]),
    "typescript": ("src/shapes.ts", TYPESCRIPT, [
        ("function", "Circle.area", 8, 10),
        ("function", "total", 13, 15),
        ("function", "Geometry.origin", 18, 18),
        ("class", "Shape", 1, 3),
        ("class", "Circle", 5, 6),
    ]),
    "go": ("stack/stack.go", GO, [
        ("function", "Stack.Pop", 11, 16),
        ("function", "New", 18, 22),
        ("assignment", "ErrEmpty", 5, 5),
        ("class", "Stack", 7, 9),
    ]),
    "rust": ("src/lib.rs", RUST, [
        ("function", "Stack.pop", 10, 12),
        ("function", "helpers.twice", 16, 18),
        ("assignment", "MAX", 3, 3),
        ("class", "Stack", 5, 7),
    ]),
    "java": ("src/stack/Stack.java", JAVA, [
        ("function", "Stack.Stack", 8, 8),
        ("function", "Stack.pop", 10, 13),
        ("function", "Stack.Node.value", 16, 16),
        ("class", "Stack", 5, 6),
    ]),
    "c": ("src/stack.c", C, [
        ("function", "top", 8, 10),
        ("function", "pop", 12, 15),
        ("class", "stack", 3, 6),
    ]),
    "cpp": ("src/stack.cpp", CPP, [
        ("function", "ds.Stack.pop", 6, 9),
        ("function", "ds.helper", 14, 14),
        ("function", "twice", 17, 17),
        ("class", "ds.Stack", 4, 10),
    ]),
    "ruby": ("lib/stack.rb", RUBY, [
        ("function", "Collections.Stack.pop", 7, 9),
        ("function", "Collections.Stack.build", 11, 13),
        ("function", "helper", 17, 19),
        ("class", "Collections.Stack", 4, 5),
    ]),
    "php": ("src/Stack.php", PHP, [
        ("function", "helper", 4, 6),
        ("function", "Stack.pop", 11, 13),
        ("class", "Stack", 8, 9),
    ]),
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(CASES))
def test_targets_are_functions_methods_and_types_with_qualified_names(language: str) -> None:
    path, source, expected = CASES[language]
    found = targets(path, source)
    assert [(t.kind, t.qualname, t.start, t.end) for t in found] == expected
    lines = source.splitlines(keepends=True)
    for target in found:
        assert target.path == path and target.label == f"{path}::{target.qualname}"
        assert target.source == "".join(lines[target.start - 1 : target.end])


def test_nested_functions_belong_to_their_parent() -> None:
    names = [target.qualname for target in targets("lib/stack.js", JAVASCRIPT)]
    assert "inner" not in " ".join(names)  # `inner` stands inside `Stack.push`
    assert "push" not in [t.qualname for t in targets("stack/stack.go", GO)]  # a closure of New


def test_signatures_are_the_name_its_parameters_and_return_type() -> None:
    go = {target.qualname: target.signature for target in targets("stack/stack.go", GO)}
    assert go["Stack.Pop"] == "Pop() (int, error)"
    assert go["New"] == "New(items ...int) *Stack"
    rust = {target.qualname: target.signature for target in targets("src/lib.rs", RUST)}
    assert rust["Stack.pop"] == "pop(&mut self) -> Option<T>"
    c = {target.qualname: target.signature for target in targets("src/stack.c", C)}
    assert c["top"] == "top(struct stack *s)"
    ruby = {target.qualname: target.signature for target in targets("lib/stack.rb", RUBY)}
    assert ruby["Collections.Stack.pop"] == "pop()"
    assert ruby["helper"] == "helper(x, y)"
    js = {target.qualname: target.signature for target in targets("lib/stack.js", JAVASCRIPT)}
    assert js["double"] == "double(x)"


def test_the_skeleton_shows_other_languages_as_it_shows_python() -> None:
    shown = skeleton(targets("stack/stack.go", GO))
    assert shown.splitlines() == [
        "stack/stack.go",
        "  Stack.Pop() (int, error)",
        "  New(items ...int) *Stack",
        '  ErrEmpty (assignment): var ErrEmpty = errors.New("empty")',
        "  Stack (class): type Stack struct { items []int }",
    ]


def test_a_header_is_read_as_c_or_cpp_and_unknown_files_have_no_targets() -> None:
    header = "class Parser {\n  public:\n    int next() { return 0; }\n};\n"
    assert [t.qualname for t in targets("include/parser.h", header)] == ["Parser.next"]
    assert targets("notes.txt", "def f(): pass\n") == []


def test_a_broken_file_still_gives_the_targets_that_parse() -> None:
    broken = GO.replace("func New(items ...int) *Stack {", "func New(items ...int) *Stack {{")
    assert "Stack.Pop" in [target.qualname for target in targets("stack/stack.go", broken)]
