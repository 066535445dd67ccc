"""The package's type stubs (transit/__init__.pyi, shipped with py.typed) against the module: the
same names, and for every function and method the same parameters, in order, with the same kinds
(keyword-only or not) and defaults. A name added to, renamed in or removed from the module without
its stub fails here."""
import ast
import inspect
import re
from pathlib import Path

import pytest

import transit

STUB_PATH = Path(transit.__file__).with_name("__init__.pyi")
STUB = ast.parse(STUB_PATH.read_text())
DUNDERS_KEPT = {"__init__", "__enter__", "__exit__", "__len__"}


def stub_classes():
    return {n.name: n for n in STUB.body if isinstance(n, ast.ClassDef)}


def stub_functions():
    return {n.name: n for n in STUB.body if isinstance(n, ast.FunctionDef)}


def stub_params(fn):
    """[(name, keyword_only, default or None)] without self."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    out = [(p.arg, False, d) for p, d in zip(positional, defaults)]
    out += [(p.arg, True, None if d is None else ast.literal_eval(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [p for p in out if p[0] != "self"]


def split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "[(" and 1 or ch in "])" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def module_params(obj, name):
    """The parameters of a pybind11 function from its signature line, or of a Python function."""
    if inspect.isfunction(obj):
        return [(p.name, p.kind == p.KEYWORD_ONLY, None if p.default is p.empty else p.default)
                for p in inspect.signature(obj).parameters.values()]
    first = inspect.getdoc(obj).splitlines()[0]
    match = re.match(rf"{re.escape(name)}\((.*)\)( -> .*)?$", first)
    assert match, f"{name}: no signature line in its docstring: {first!r}"
    out, keyword_only = [], False
    for part in split_top_level(match.group(1)):
        if part == "*":
            keyword_only = True
            continue
        pname = part.split(":")[0].strip()
        default = part.split(" = ", 1)[1] if " = " in part else None
        if pname != "self":
            out.append((pname, keyword_only, None if default in (None, "None") else ast.literal_eval(default)))
    return out


def test_the_stub_lists_the_package_names():
    names = next(n for n in STUB.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__")
    assert ast.literal_eval(names.value) == transit.__all__
    declared = set(stub_classes()) | set(stub_functions()) | {
        n.target.id for n in STUB.body if isinstance(n, ast.AnnAssign)}
    assert declared >= set(transit.__all__), f"missing from the stub: {set(transit.__all__) - declared}"
    assert Path(transit.__file__).with_name("py.typed").exists()


@pytest.mark.parametrize("cls", sorted(stub_classes()))
def test_class_members_and_parameters_match(cls):
    runtime = getattr(transit, cls)
    stub = stub_classes()[cls]
    stub_members = {m.name: m for m in stub.body if isinstance(m, ast.FunctionDef)}
    runtime_members = {k for k in vars(runtime) if not k.startswith("_") or k in DUNDERS_KEPT}
    assert set(stub_members) == runtime_members, (
        f"{cls}: only in the stub {set(stub_members) - runtime_members}, only in the module "
        f"{runtime_members - set(stub_members)}")
    for name, fn in stub_members.items():
        value = vars(runtime)[name]
        if isinstance(value, property):
            assert any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list), f"{cls}.{name}"
            continue
        if name in ("__enter__", "__exit__"):
            continue  # pybind11 lambdas without parameter names
        assert stub_params(fn) == module_params(value, name), f"{cls}.{name}"


@pytest.mark.parametrize("name", sorted(stub_functions()))
def test_function_parameters_match(name):
    assert stub_params(stub_functions()[name]) == module_params(getattr(transit, name), name), name
