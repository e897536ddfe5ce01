"""The official OpenAI Python client against `kvgate serve` (run by reference-cli-test).

usage: openai_client_check.py BASE_URL MODEL
Exits 0 when every check holds; prints what failed otherwise.
"""
import sys

import openai


def main() -> int:
    base_url, model = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=120)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    ids = [m.id for m in client.models.list().data]
    check(ids == [model], f"models.list: {ids}")

    messages = [{"role": "user", "content": "Tell me about the sea"}]
    chat = client.chat.completions.create(model=model, messages=messages, max_tokens=20, temperature=0)
    text = chat.choices[0].message.content
    check(isinstance(text, str), "chat: no content")
    check(chat.choices[0].finish_reason in ("stop", "length"), f"chat finish_reason {chat.choices[0].finish_reason}")
    check(chat.usage.total_tokens == chat.usage.prompt_tokens + chat.usage.completion_tokens, "chat usage")

    streamed, finish, usage = "", None, None
    for chunk in client.chat.completions.create(model=model, messages=messages, max_tokens=20, temperature=0,
                                                stream=True, stream_options={"include_usage": True}):
        if chunk.usage is not None:
            usage = chunk.usage
        for c in chunk.choices:
            streamed += c.delta.content or ""
            finish = c.finish_reason or finish
    check(streamed == text, f"stream {streamed!r} != {text!r}")
    check(finish == chat.choices[0].finish_reason, f"stream finish_reason {finish}")
    check(usage is not None and usage.completion_tokens == chat.usage.completion_tokens, f"stream usage {usage}")

    comp = client.completions.create(model=model, prompt="Once upon a time", max_tokens=12, temperature=0)
    check(comp.object == "text_completion" and isinstance(comp.choices[0].text, str), "completions")
    s = "".join(c.choices[0].text for c in client.completions.create(model=model, prompt="Once upon a time",
                                                                      max_tokens=12, temperature=0, stream=True))
    check(s == comp.choices[0].text, f"completions stream {s!r} != {comp.choices[0].text!r}")

    try:
        client.chat.completions.create(model="no-such-model", messages=messages, max_tokens=4)
        failures.append("unknown model accepted")
    except openai.NotFoundError as e:
        check(e.status_code == 404 and "does not exist" in str(e), f"unknown model: {e}")
    try:
        client.chat.completions.create(model=model, messages=messages, max_tokens=4, temperature=9)
        failures.append("temperature 9 accepted")
    except openai.BadRequestError as e:
        check(e.status_code == 400 and e.body.get("param") == "temperature", f"bad temperature: {e.body}")

    for f in failures:
        print("FAILED:", f)
    print("openai client checks:", "ok" if not failures else f"{len(failures)} failed", f"(openai {openai.__version__})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
