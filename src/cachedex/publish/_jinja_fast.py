"""Jinja, rendering the same text faster: the few uses of its private API, in one place.

A site renders hundreds of thousands of small pages; three of Jinja's costs per page
are avoidable without changing a byte of output:

- each ``{{ value }}`` is escaped with ``markupsafe.escape``, which wraps its result in
  a ``Markup``: two thirds of the 0.46 us it takes, on about 45 values a spec page.
  :class:`FastEnvironment` compiles ``{{ value }}`` to :func:`escape_output`, the same
  characters as a plain string (the page only joins the pieces), but for any character
  that would hide or reorder the text around it, written as its escape (the one
  change to the text, and only to text beyond ASCII);
- ``Template.render`` merges Jinja's globals (a chain of dicts) into every context:
  :func:`render_template` calls the compiled template directly with one dict;
- the ``join`` filter costs 2 us a call: :func:`fast_join` joins a tuple of plain
  strings in one call and leaves anything else to Jinja's own filter.

Each relies on Jinja internals (``CodeGenerator._output_child_pre``,
``Template.root_render_func``, ``markupsafe._escape_inner``), which is why Jinja2 and
MarkupSafe are pinned below their next major version. ``tests/publish/test_render.py``
renders every template with stock Jinja and with this, and compares the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jinja2 import Environment, Template, pass_eval_context
from jinja2.compiler import CodeGenerator
from markupsafe import escape

from ..values import page_visible


def _escape_plain(text: str, /) -> str:
    """``escape(text)`` as a plain string, where MarkupSafe lacks ``_escape_inner``."""
    return str.__str__(escape(text))


try:
    # The C function behind escape(): the same characters, without making a Markup.
    from markupsafe import _escape_inner as _escape_text  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another MarkupSafe: the same text, a little slower
    _escape_text = _escape_plain


__all__ = ["FastEnvironment", "escape_exact", "escape_output", "escape_text", "fast_join", "render_template"]


#: ``markupsafe.escape(text)`` of a plain string, as a plain string, and nothing else: for
#: an attribute whose value a page's script reads back as data (a row's OS, a filter's
#: value), which must stay the value itself.
escape_exact: Callable[[str], str] = _escape_text


def escape_text(text: str, /) -> str:
    """``markupsafe.escape(text)`` of a plain string, as a plain string, with what would
    hide or reorder text on the page first written as escapes (:func:`~..values.page_visible`:
    a value from a mirror may hold a right-to-left override). ASCII text, nearly all,
    goes straight to MarkupSafe's C function (the search page's rows call this a dozen
    times a row)."""
    return _escape_text(text) if text.isascii() else _escape_text(page_visible(text))


def escape_output(value: object) -> str:
    """What :func:`escape_text` gives of ``value``: for a string, ``markupsafe.escape``'s
    characters (but for the escapes above), as a plain string; a Markup as it is."""
    if type(value) is str:  # (escape_text inlined: this runs for every value of every page)
        return _escape_text(value if value.isascii() else page_visible(value))
    html = getattr(value, "__html__", None)
    if html is not None:  # Markup, or an object that renders itself
        return html()  # type: ignore[no-any-return]
    return escape_text(str(value))  # StrictUndefined raises here, as escape() does


class _CodeGenerator(CodeGenerator):
    """Jinja's code generator, but ``{{ value }}`` in autoescaped output calls
    :func:`escape_output`. Anything else (a volatile autoescape setting, a
    ``finalize``) is compiled as Jinja does; so would everything if a later Jinja
    renamed this hook: same pages, slower."""

    def _output_child_pre(self, node: Any, frame: Any, finalize: Any) -> None:
        if frame.eval_ctx.autoescape and not frame.eval_ctx.volatile and finalize.src is None:
            self.write("environment.escape_output(")
        else:
            super()._output_child_pre(node, frame, finalize)


class FastEnvironment(Environment):
    """An :class:`~jinja2.Environment` whose templates escape output with :func:`escape_output`."""

    code_generator_class = _CodeGenerator
    escape_output = staticmethod(escape_output)


def render_template(environment: Environment, template: Template, context: dict[str, Any]) -> str:
    """What ``template.render(context)`` gives, with ``context`` as the whole context
    (not merged with Jinja's globals)."""
    ctx = template.new_context(context, shared=True)
    try:
        return environment.concat(template.root_render_func(ctx))
    except Exception:
        environment.handle_exception()  # re-raised with the template's own lines in the traceback
        raise  # handle_exception always raises; this keeps type checkers informed


def fast_join(environment: Environment) -> Callable[..., str]:
    """``environment``'s ``join`` filter, in one call for a tuple of plain strings (a
    package page joins each spec's stacks and variants). The text is the same: Jinja
    joins plain strings plainly too, and autoescape escapes the result."""
    jinja_join = environment.filters["join"]

    @pass_eval_context
    def join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        if attribute is None and type(d) is str and type(value) is tuple and all(type(v) is str for v in value):
            return d.join(value)
        return jinja_join(eval_ctx, value, d, attribute)  # type: ignore[no-any-return]

    return join
