"""An image `read` returned (SPEC §10), in each vendor's tool-result shape.

Anthropic's ``tool_result`` and the Responses API's ``function_call_output`` carry images;
Chat Completions tool messages carry text only, so there the model is told the image is not
shown rather than given bytes it cannot see.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from dsh_fs.tools import ImageValue

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult

__all__ = [
    "anthropic_image_block",
    "image_of",
    "image_url",
    "not_carried",
    "responses_image_output",
]


def image_of(result: ToolResult) -> ImageValue | None:
    """The image a successful `read` returned, else None."""
    value = result.data
    return value if isinstance(value, ImageValue) and not result.is_error else None


def _base64(image: ImageValue) -> str:
    return base64.b64encode(image.data).decode("ascii")


def image_url(image: ImageValue) -> str:
    """The image as a base64 ``data:`` URL."""
    return f"data:{image.mime_type};base64,{_base64(image)}"


def anthropic_image_block(image: ImageValue) -> dict[str, Any]:
    """An Anthropic ``image`` content block (``ImageBlockParam``) with the file's bytes."""
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": _base64(image)},
    }


def responses_image_output(text: str, image: ImageValue) -> list[dict[str, Any]]:
    """A ``function_call_output``'s content: the read's text, then the image as an
    ``input_image`` with a base64 data URL."""
    return [
        {"type": "input_text", "text": text},
        {
            "type": "input_image",
            "image_url": image_url(image),
            "detail": "auto",
        },
    ]


def not_carried(text: str) -> str:
    """`text` (the read's rendering), saying the image itself is not shown."""
    return f"{text}\n(The image is not shown: this tool result can carry text only.)"
