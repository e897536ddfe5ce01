#!/usr/bin/env python3
"""Renders tests/data/jinja/cases.jsonl: each template x conversation rendered by Jinja2 configured as
transformers' apply_chat_template configures it (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, its tojson / raise_exception / strftime_now). kvgate's chat-template
test renders the same cases and must produce the same text (or an error for the cases that raise).

Run from the repository root: .venv-tests/bin/python tests/data/jinja/make_golden.py
"""
import datetime
import json
import os
import sys

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
QWEN3 = os.path.join(HERE, "..", "tokenizers", "qwen3", "tokenizer_config.json")
NOW = 1700000000  # strftime_now() renders this instant (UTC); the C++ side passes now_unix_seconds


def environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.fromtimestamp(NOW, tz=datetime.timezone.utc).strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def templates():
    out = {}
    for name in sorted(os.listdir(os.path.join(HERE, "templates"))):
        if name.endswith(".jinja"):
            with open(os.path.join(HERE, "templates", name), encoding="utf-8") as f:
                out[name[:-6]] = f.read()
    with open(QWEN3, encoding="utf-8") as f:
        out["qwen3"] = json.load(f)["chat_template"]
    return out


WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
                               "required": ["city"]}}}
CONVERSATIONS = {
    "one_user": [{"role": "user", "content": "Hello"}],
    "system_multi": [{"role": "system", "content": "  Be brief.  "}, {"role": "user", "content": "What is 2+2?"},
                     {"role": "assistant", "content": " 4 "}, {"role": "user", "content": "And 3+3?"}],
    "no_system_multi": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
                        {"role": "user", "content": "Tell me a joke.", "name": "bob"}],
    "unicode": [{"role": "user", "content": "naïve café 東京 🚀 \"quoted\" {{ not a tag }} {% nor this %}"}],
    "thinking": [{"role": "user", "content": "Q1"},
                 {"role": "assistant", "content": "<think>\nreasoning here\n</think>\n\nA1"},
                 {"role": "user", "content": "Q2"}],
    "consecutive_users": [{"role": "user", "content": "first"}, {"role": "user", "content": "second"}],
    "system_only": [{"role": "system", "content": "sys"}],
    "empty": [],
    "tool_dict_args": [{"role": "system", "content": "You call tools."},
                       {"role": "user", "content": "Weather in Paris?"},
                       {"role": "assistant", "content": "", "tool_calls": [
                           {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                       {"role": "tool", "content": "{\"temp\": 21}"},
                       {"role": "assistant", "content": "It is 21 degrees."},
                       {"role": "user", "content": "Thanks"}],
    "tool_str_args": [{"role": "user", "content": "Weather in Paris and Rome?"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                          {"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
                      {"role": "tool", "content": "21"},
                      {"role": "tool", "content": "25"}],
}

CASES = [
    # (template, conversation, variables, tools)
    ("features", "one_user", {}, None),
    ("features", "system_multi", {}, None),
    ("features", "no_system_multi", {}, None),
    ("features", "unicode", {}, None),
    ("features", "empty", {}, None),
    ("header_tools", "one_user", {}, None),
    ("header_tools", "system_multi", {"date_string": "1 Jan 2025"}, None),
    ("header_tools", "tool_dict_args", {}, [WEATHER_TOOL]),
    ("header_tools", "tool_dict_args", {"tools_in_user_message": False}, [WEATHER_TOOL]),
    ("header_tools", "empty", {}, [WEATHER_TOOL]),
    ("header_tools", "tool_str_args", {}, [WEATHER_TOOL]),
    ("alternating", "system_multi", {}, None),
    ("alternating", "no_system_multi", {}, None),
    ("alternating", "consecutive_users", {}, None),
    ("alternating", "unicode", {}, None),
    ("role_map", "no_system_multi", {}, None),
    ("role_map", "system_only", {}, None),
    ("role_map", "unicode", {}, None),
    ("think_tools", "thinking", {}, None),
    ("think_tools", "tool_str_args", {}, None),
    ("think_tools", "system_multi", {}, None),
    ("qwen3", "tool_dict_args", {}, [WEATHER_TOOL]),
    ("qwen3", "tool_str_args", {"enable_thinking": False}, [WEATHER_TOOL]),
    ("qwen3", "thinking", {"enable_thinking": True}, None),
    ("qwen3", "unicode", {}, None),
]

SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}


def main():
    env = environment()
    sources = templates()
    out_path = os.path.join(HERE, "cases.jsonl")
    with open(out_path, "w", encoding="utf-8") as out:
        for name, conv, variables, tools in CASES:
            for add_generation_prompt in (False, True):
                messages = CONVERSATIONS[conv]
                case = {"template": name, "conversation": conv, "messages": messages,
                        "add_generation_prompt": add_generation_prompt, "variables": variables, "tools": tools,
                        "special_tokens": SPECIAL}
                try:
                    text = env.from_string(sources[name]).render(
                        **SPECIAL, **variables, messages=messages, tools=tools, documents=None,
                        add_generation_prompt=add_generation_prompt)
                    case["text"] = text
                except TemplateError as e:
                    case["error"] = str(e)
                out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print("wrote", out_path, file=sys.stderr)


if __name__ == "__main__":
    main()
