"""The targets of a file in a language tree-sitter parses (aci/syntax.py's grammars: JavaScript,
TypeScript, Go, Rust, Java, C, C++, Ruby, PHP), the counterpart of skeleton.py and candidates.py
for Python: functions and methods (qualified by their class, impl, namespace or module:
`Counter.top`, `ns.Parser.next`; a Go method by its receiver's type), a class's own
statements (fields, constants: header to the last of them), types declared whole (a struct, an
enum, an interface, a type alias) and top-level constants and variables. Nested functions belong
to their parent. Each grammar's node types are one `Shape`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from swe_aci.aci import syntax
from swe_aci.pipeline.skeleton import Location

if TYPE_CHECKING:
    from tree_sitter import Node

SIGNATURE_CHARS = 60


def _types(names: str) -> frozenset[str]:
    return frozenset(names.split())


BODY_TYPES = _types(
    "block body_statement class_body compound_statement constructor_body declaration_list "
    "enum_body field_declaration_list interface_body statement_block"
)
# What a JavaScript/TypeScript `const f = ...` binds that makes it a function.
FUNCTION_VALUES = _types("arrow_function function function_expression generator_function")
# Declarators a C/C++ function's name is wrapped in: `*f(...)`, `&f(...)`, `f(...)`.
DECLARATORS = _types("function_declarator pointer_declarator reference_declarator init_declarator")


@dataclass(frozen=True)
class Shape:
    """A grammar's node types by what they are to the pipeline."""

    functions: frozenset[str]  # functions and methods: targets; their bodies not searched
    classes: frozenset[str] = frozenset()  # their body holds methods and fields
    records: frozenset[str] = frozenset()  # types declared whole: one target each
    namespaces: frozenset[str] = frozenset()  # a prefix of the names in their body
    wrappers: frozenset[str] = frozenset()  # looked through: `export`, `template <...>`
    fields: frozenset[str] = frozenset()  # a class's own statements
    constants: frozenset[str] = frozenset()  # top-level declarations


JAVASCRIPT = Shape(
    functions=_types("function_declaration generator_function_declaration method_definition"),
    classes=_types("class_declaration abstract_class_declaration class"),
    records=_types("interface_declaration enum_declaration type_alias_declaration"),
    namespaces=_types("internal_module module"),
    wrappers=_types("export_statement expression_statement"),  # `namespace N {}` is the latter
    fields=_types("field_definition public_field_definition"),
    constants=_types("lexical_declaration variable_declaration"),
)
CPP = Shape(
    functions=_types("function_definition"),
    classes=_types("class_specifier struct_specifier"),
    records=_types("enum_specifier union_specifier type_definition alias_declaration"),
    namespaces=_types("namespace_definition"),
    wrappers=_types("template_declaration linkage_specification"),
    fields=_types("field_declaration"),
)
SHAPES: dict[str, Shape] = {
    "javascript": JAVASCRIPT,
    "typescript": JAVASCRIPT,
    "tsx": JAVASCRIPT,
    "go": Shape(
        functions=_types("function_declaration method_declaration"),
        records=_types("type_declaration"),
        constants=_types("const_declaration var_declaration"),
    ),
    "rust": Shape(
        functions=_types("function_item"),
        classes=_types("impl_item trait_item"),
        records=_types("struct_item enum_item union_item type_item"),
        namespaces=_types("mod_item"),
        constants=_types("const_item static_item"),
    ),
    "java": Shape(
        functions=_types("method_declaration constructor_declaration"),
        classes=_types(
            "class_declaration interface_declaration enum_declaration record_declaration"
        ),
        wrappers=_types("enum_body_declarations"),
        fields=_types("field_declaration constant_declaration"),
    ),
    # C has no classes: a struct with a body is declared whole there (`records`)
    "c": Shape(
        functions=_types("function_definition"),
        records=_types("struct_specifier enum_specifier union_specifier type_definition"),
        wrappers=_types("linkage_specification"),
    ),
    "cpp": CPP,
    "ruby": Shape(
        functions=_types("method singleton_method"),
        classes=_types("class module singleton_class"),
        fields=_types("assignment"),
        constants=_types("assignment"),
    ),
    "php": Shape(
        functions=_types("function_definition method_declaration"),
        classes=_types(
            "class_declaration interface_declaration trait_declaration enum_declaration"
        ),
        namespaces=_types("namespace_definition"),
        fields=_types("property_declaration const_declaration"),
        constants=_types("const_declaration"),
    ),
}


def targets(path: str, text: str) -> list[Location]:
    """The functions and methods of `text` in file order, then its other targets (class fields,
    types declared whole, top-level constants) in file order; [] when no grammar parses `path`.
    Raises GrammarUnavailable."""
    parsed = syntax.parse_tree(text, path)
    if parsed is None:
        return []
    reader = _Reader(path, text, SHAPES[parsed.grammar])
    reader.visit(parsed.tree.root_node, "", top_level=True)
    return [*reader.functions, *reader.others]


class _Reader:
    def __init__(self, path: str, text: str, shape: Shape) -> None:
        self.path = path
        self.lines = text.splitlines(keepends=True)
        self.shape = shape
        self.functions: list[Location] = []
        self.others: list[Location] = []

    def visit(self, node: Node, prefix: str, top_level: bool) -> None:
        shape = self.shape
        for child in node.named_children:
            kind = child.type
            if kind in shape.wrappers:
                self.visit(body_of(child) or child, prefix, top_level)
            elif kind in shape.functions:
                self.function(child, child, prefix + function_name(child))
            elif kind in shape.classes and body_of(child) is not None:
                self.type_body(child, prefix)
            elif kind in shape.namespaces:
                body = body_of(child)
                if body is not None:
                    name = declared_name(child)
                    self.visit(body, f"{prefix}{name}." if name else prefix, top_level)
            elif kind in shape.records and _declares_type(child):
                self.other(child, child, prefix + declared_name(child), "class")
            elif top_level and kind in shape.constants:
                value = bound_function(child)
                if value is not None:
                    self.function(child, value, prefix + declared_name(child))
                elif name := declared_name(child):
                    self.other(child, child, prefix + name, "assignment")

    def type_body(self, node: Node, prefix: str) -> None:
        name = declared_name(node)
        body = body_of(node)
        assert body is not None
        fields = [child for child in body.named_children if child.type in self.shape.fields]
        if fields:
            self.other(node, fields[-1], prefix + name, "class")
        self.visit(body, f"{prefix}{name}." if name else prefix, top_level=False)

    def function(self, node: Node, function: Node, qualname: str) -> None:
        name = qualname.rpartition(".")[2]
        self.functions.append(self.location(node, node, qualname, signature(function, name)))

    def other(self, first: Node, last: Node, qualname: str, kind: str) -> None:
        location = self.location(first, last, qualname, "")
        head = " ".join(location.source.split())
        summary = head if len(head) <= SIGNATURE_CHARS else head[: SIGNATURE_CHARS - 3] + "..."
        self.others.append(
            Location(
                location.path,
                qualname,
                summary,
                location.start,
                location.end,
                location.indent,
                location.source,
                kind,
            )
        )

    def location(self, first: Node, last: Node, qualname: str, signature: str) -> Location:
        start, end = first.start_point[0] + 1, last.end_point[0] + 1
        source = "".join(self.lines[start - 1 : end])
        return Location(self.path, qualname, signature, start, end, first.start_point[1], source)


def text_of(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def body_of(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    return next((child for child in node.named_children if child.type in BODY_TYPES), None)


def plain_name(node: Node | None) -> str:
    """A name as the pipeline writes it: `ns::A::f` -> `ns.A.f`, `Box<T>` -> `Box`."""
    text = text_of(node).partition("<")[0]
    return ".".join(part for part in text.replace("::", ".").split(".") if part.strip())


def function_name(node: Node) -> str:
    """The function's name, qualified by a Go method's receiver type (`Counter.Top`) or by the
    class a C++ definition names (`ns::A::g` -> `ns.A.g`)."""
    name = node.child_by_field_name("name")
    if name is not None:
        receiver = node.child_by_field_name("receiver")
        if receiver is not None and node.type == "method_declaration":
            owner = next((n for n in _descendants(receiver) if n.type == "type_identifier"), None)
            return f"{text_of(owner)}.{text_of(name)}" if owner is not None else text_of(name)
        return text_of(name)
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in DECLARATORS:
        declarator = declarator.child_by_field_name("declarator")
    return plain_name(declarator) or "function"


def declared_name(node: Node) -> str:
    """What a declaration names: its `name` (a Rust impl: its type; a C typedef: its
    declarator), or the names of its parts joined by commas (`const a, b = ...`; Go's
    `type (...)`), or '' when it names nothing."""
    for field in ("name", "type", "left", "declarator"):
        child = node.child_by_field_name(field)
        if child is not None and (field != "type" or node.type == "impl_item"):
            if field == "declarator" and child.type in DECLARATORS:
                return declared_name(child)
            return plain_name(child)
    names = [declared_name(child) for child in node.named_children if _declares(child)]
    return ",".join(name for name in names if name)


def _declares(node: Node) -> bool:
    return node.type.endswith(("_spec", "declarator", "_element", "_item"))


def _declares_type(node: Node) -> bool:
    """A record with a body or a name of its own (not `struct P` used as a type)."""
    if node.type in ("struct_specifier", "enum_specifier", "union_specifier"):
        return node.child_by_field_name("body") is not None
    return bool(declared_name(node))


def bound_function(node: Node) -> Node | None:
    """The function a `const f = (...) => ...` declaration binds (its only declarator's value)."""
    declarators = [child for child in node.named_children if child.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    value = declarators[0].child_by_field_name("value")
    return value if value is not None and value.type in FUNCTION_VALUES else None


def signature(function: Node, name: str) -> str:
    """`name(parameters) rest-of-the-header`, whitespace collapsed: what stands between the
    parameters and the body (a return type)."""
    parameters = function.child_by_field_name("parameters")
    if parameters is None:
        declarator = function.child_by_field_name("declarator")
        while declarator is not None and parameters is None:
            parameters = declarator.child_by_field_name("parameters")
            declarator = declarator.child_by_field_name("declarator")
    if parameters is None:
        return f"{name}()"
    body = body_of(function)
    data = function.text or b""
    end = (body.start_byte if body is not None else function.end_byte) - function.start_byte
    header = data[parameters.start_byte - function.start_byte : end].decode("utf-8", "replace")
    header = " ".join(header.split()).removesuffix("{").rstrip().removesuffix("=>").rstrip()
    if not header.startswith("("):
        header = f"({header})"  # Ruby's `def f a, b` has no parentheses
    return f"{name}{header}"


def _descendants(node: Node) -> list[Node]:
    found, pending = [], list(node.named_children)
    while pending:
        child = pending.pop(0)
        found.append(child)
        pending.extend(child.named_children)
    return found
