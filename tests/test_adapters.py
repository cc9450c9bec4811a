"""The framework adapters, each built as the framework's own tool object and invoked as the framework would,
offline (a scripted model stands in for the LLM where the framework has one), against a real database.

Each test checks: the schema the framework publishes is the tool's; a good call returns the run's hits
(audited under the run); a call the model got wrong reaches the model through the framework's error
channel, naming the bad value; an ended run says so without the run token.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from history_search import AsyncSearch, Auditor, Runtime, Search, tool_schema
from tests.test_mcp import as_role, build_world

TEAM = {f"t{i}" for i in range(5)}
BAD_AFTER = {"query": "launch", "after": "yesterday"}


@pytest.fixture
def runtime(connect_as) -> Runtime:
    rt = Runtime(connect_as("history_runtime"))
    build_world(rt)  # the MCP tests' world: alice and bob in "team", bob's DM with the agent
    return rt


@pytest.fixture
def run(runtime) -> uuid.UUID:
    return runtime.begin_run("agent", "team", "alice", "q")


def hits_of(text: str) -> set[str]:
    data = json.loads(text)
    assert "error" not in data, data
    return {h["message_id"] for h in data["hits"]}


def audited(connect_as, run: uuid.UUID) -> int:
    return len(Auditor(connect_as("history_auditor")).search_events(run=run))


# --------------------------------------------------------------------------
# OpenAI Agents SDK
# --------------------------------------------------------------------------


def test_openai_agents_function_tool_in_a_run(connect_as, runtime, run):
    from agents import Agent, FunctionTool, RunConfig, Runner
    from agents.items import ToolCallOutputItem
    from agents.testing import ScriptedModel, assistant_message, function_call

    from history_search.adapters.openai_agents import openai_agents_tool

    tool = openai_agents_tool(Search(connect_as("history_searcher"), run))
    assert isinstance(tool, FunctionTool) and tool.name == "search_history" and tool.strict_json_schema
    assert tool.params_json_schema == tool_schema(strict=True)
    model = ScriptedModel([
        [function_call("search_history", {"query": "launch", "speaker": None, "after": None, "before": None,
                                          "limit": 2}, call_id="c1")],
        [function_call("search_history", BAD_AFTER, call_id="c2")],
        [assistant_message("done")],
    ])
    agent = Agent(name="helper", model=model, tools=[tool])
    result = asyncio.run(Runner.run(agent, "what about the launch?", run_config=RunConfig(tracing_disabled=True)))

    assert result.final_output == "done"
    assert model.first_call is not None and model.first_call.tools[0].params_json_schema == tool_schema(True)
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert len(outputs) == 2
    assert len(hits_of(outputs[0])) == 2 and hits_of(outputs[0]) <= TEAM
    error = json.loads(outputs[1])  # the SDK's channel for what the model should see: the tool's output
    assert error["code"] == "invalid_arguments" and '"yesterday"' in error["error"]
    assert audited(connect_as, run) == 1  # the bad call never reached the database

    runtime.end_run(run)
    ended = asyncio.run(Runner.run(Agent(name="helper", model=ScriptedModel([
        [function_call("search_history", {"query": "launch"}, call_id="c3")], [assistant_message("ok")]]),
        tools=[tool]), "again", run_config=RunConfig(tracing_disabled=True)))
    [out] = [item.output for item in ended.new_items if isinstance(item, ToolCallOutputItem)]
    assert json.loads(out)["error"].startswith("the run has ended") and str(run) not in out


# --------------------------------------------------------------------------
# LangChain
# --------------------------------------------------------------------------


def test_langchain_structured_tool(db_dsn, connect_as, runtime, run):
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from history_search.adapters.langchain import langchain_tool

    tool = langchain_tool(Search(connect_as("history_searcher"), run))
    assert isinstance(tool, StructuredTool)
    # what bind_tools sends a model
    assert convert_to_openai_tool(tool)["function"]["parameters"]["properties"] == tool_schema()["properties"]
    assert convert_to_openai_tool(tool)["function"]["parameters"]["required"] == ["query"]

    def call(args: dict[str, Any], call_id: str) -> ToolMessage:
        message = tool.invoke({"type": "tool_call", "id": call_id, "name": "search_history", "args": args})
        assert isinstance(message, ToolMessage) and message.tool_call_id == call_id
        return message

    good = call({"query": "launch", "limit": 3}, "1")
    assert good.status == "success" and len(hits_of(good.content)) == 3 and hits_of(good.content) <= TEAM
    bad = call(BAD_AFTER, "2")  # ToolException, handled: an error ToolMessage the model reads
    assert bad.status == "error" and '"yesterday"' in bad.content and "RFC 3339" in bad.content
    inverted = call({"query": "launch", "after": "2026-03-02T00:00:00Z", "before": "2026-03-01T00:00:00Z"}, "3")
    assert inverted.status == "error" and "later than" in inverted.content

    # the async path, as an async agent loop calls it
    atool = None

    async def async_calls() -> tuple[Any, Any]:
        nonlocal atool
        import psycopg

        conn = await psycopg.AsyncConnection.connect(as_role(db_dsn, "history_searcher"), autocommit=True)
        try:
            atool = langchain_tool(AsyncSearch(conn, run))
            one = await atool.ainvoke({"type": "tool_call", "id": "4", "name": "search_history",
                                       "args": {"query": "number 4"}})
            runtime.end_run(run)
            two = await atool.ainvoke({"type": "tool_call", "id": "5", "name": "search_history",
                                       "args": {"query": "launch"}})
            return one, two
        finally:
            await conn.close()

    one, two = asyncio.run(async_calls())
    assert one.status == "success" and "t4" in hits_of(one.content)
    assert two.status == "error" and two.content.startswith("the run has ended") and str(run) not in two.content
    assert audited(connect_as, run) == 2


# --------------------------------------------------------------------------
# PydanticAI
# --------------------------------------------------------------------------


def test_pydantic_ai_tool_with_model_retry_and_tool_failed(connect_as, runtime, run):
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import (ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, TextPart,
                                      ToolCallPart, ToolReturnPart)
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from history_search.adapters.pydantic_ai import pydantic_ai_tool

    tool = pydantic_ai_tool(Search(connect_as("history_searcher"), run))
    assert isinstance(tool, Tool) and tool.name == "search_history"
    seen: dict[str, Any] = {}
    script = [ToolCallPart("search_history", {"query": "launch", "limit": 2}, tool_call_id="c1"),
              ToolCallPart("search_history", BAD_AFTER, tool_call_id="c2"),
              "end run",
              ToolCallPart("search_history", {"query": "launch"}, tool_call_id="c3")]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["schema"] = info.function_tools[0].parameters_json_schema
        step = script.pop(0) if script else None
        if step == "end run":
            runtime.end_run(run)
            step = script.pop(0)
        if step is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[step])

    agent = Agent(FunctionModel(model), tools=[tool], retries=2)
    result = agent.run_sync("what about the launch?")

    assert result.output == "done" and seen["schema"] == tool_schema()
    parts = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    returns = {p.tool_call_id: p for p in parts if isinstance(p, (ToolReturnPart, RetryPromptPart))}
    good = returns["c1"]
    assert isinstance(good, ToolReturnPart) and good.outcome == "success" and len(hits_of(good.content)) == 2
    retry = returns["c2"]  # ModelRetry: a failed return the model is asked to correct
    assert retry.outcome == "retried" and retry.retry is not None and retry.retry.cause == "model_retry"
    assert '"yesterday"' in str(retry.content) and "RFC 3339" in str(retry.content)
    failed = returns["c3"]  # ToolFailed: the model sees the failure, without an invitation to retry
    assert failed.outcome == "failed" and str(failed.content).startswith("the run has ended")
    assert str(run) not in str(failed.content)
    assert audited(connect_as, run) == 1


# --------------------------------------------------------------------------
# LlamaIndex
# --------------------------------------------------------------------------


def test_llamaindex_function_tool_has_a_real_schema(db_dsn, connect_as, runtime, run):
    from llama_index.core.llms.llm import ToolSelection
    from llama_index.core.tools import FunctionTool
    from llama_index.core.tools.calling import acall_tool, call_tool_with_selection

    from history_search.adapters.llamaindex import llamaindex_tool

    tool = llamaindex_tool(Search(connect_as("history_searcher"), run))
    assert isinstance(tool, FunctionTool)
    params = tool.metadata.get_parameters_dict()  # what LlamaIndex sends an LLM
    assert set(params["properties"]) == set(tool_schema()["properties"]) and params["required"] == ["query"]
    assert params["properties"]["speaker"]["enum"] == ["anyone", "requester", "you"]
    assert (params["properties"]["limit"]["minimum"], params["properties"]["limit"]["maximum"]) == (1, 20)
    openai_shape = tool.metadata.to_openai_tool()
    assert openai_shape["function"]["name"] == "search_history" and openai_shape["function"]["parameters"] == params

    def select(args: dict[str, Any]) -> Any:  # the path LlamaIndex's agents take for a model's tool call
        return call_tool_with_selection(ToolSelection(tool_id="c", tool_name="search_history", tool_kwargs=args),
                                        [tool])

    good = select({"query": "launch", "limit": 2})
    assert not good.is_error and len(hits_of(good.content)) == 2 and hits_of(good.content) <= TEAM
    bad = select(BAD_AFTER)
    assert bad.is_error and '"yesterday"' in bad.content and bad.exception.code == "invalid_arguments"

    async def async_call() -> Any:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(as_role(db_dsn, "history_searcher"), autocommit=True)
        try:
            runtime.end_run(run)
            return await acall_tool(llamaindex_tool(AsyncSearch(conn, run)), {"query": "launch"})
        finally:
            await conn.close()

    ended = asyncio.run(async_call())
    assert ended.is_error and "the run has ended" in ended.content and str(run) not in ended.content
    assert audited(connect_as, run) == 1
