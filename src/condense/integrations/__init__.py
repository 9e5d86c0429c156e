"""condense inside the agent frameworks people already run: one line each.

One module per host, each behind its own extra; importing this package imports none of
them:

- ``condense.integrations.langchain`` — ``CondenseMiddleware`` for LangChain v1's
  ``create_agent(..., middleware=[...])`` (``pip install 'condense[langchain]'``);
- ``condense.integrations.openai_agents`` — ``condense_input_filter`` for the OpenAI
  Agents SDK's ``RunConfig(call_model_input_filter=...)`` and ``CondenseSession`` around
  any of its sessions (``condense[openai-agents]``);
- ``condense.integrations.pydantic_ai`` — ``CondenseCapability`` for pydantic-ai's
  ``Agent(..., capabilities=[...])`` (``condense[pydantic-ai]``);
- ``condense.integrations.litellm`` — ``handler``, a LiteLLM ``CustomLogger`` for
  ``litellm.callbacks`` and the LiteLLM proxy's ``callbacks:`` (``condense[litellm]``);
- ``condense.integrations.hermes`` — the ``condense`` context engine of hermes-agent,
  found through the ``hermes_agent.plugins`` entry point (``condense[hermes]``).

Every adapter does the same thing before each model call (:mod:`._fit`): it repairs
what the provider would refuse and, when the request is over the budget (by default the
model's context window, less the output it asks for and what it sends besides the
history), compresses it; the latest user message always arrives verbatim. Each keeps the
host's own message objects for every message condense did not change.
"""
