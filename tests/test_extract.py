"""Fact extraction, summaries, entities and the LLM adapter (pure functions: no database needed)."""

from __future__ import annotations

import json

import pytest

from echo_duck.errors import InvalidInput
from echo_duck.lifecycle.extract import Candidate, extract_facts
from echo_duck.lifecycle.extract_llm import llm_extractor
from echo_duck.lifecycle.summary import entities, summarize


def facts(text: str, role: str = "user") -> list[Candidate]:
    return extract_facts([(role, text)])


def one(text: str) -> Candidate:
    found = facts(text)
    assert len(found) == 1, (text, found)
    return found[0]


# -- explicit statements: (message, content, type, key) -------------------------------------------------
POSITIVE = [
    ("remember that I prefer pnpm over npm", "User prefers pnpm over npm", "user", "preference:package_manager"),
    ("Please remember the staging server is staging.acme.io", "The staging server is staging.acme.io",
     "environment", "project:staging_server"),
    ("Remember that I have two cats", "User has two cats", "user", None),
    ("Can you remember that my birthday is May 3?", "The user's birthday is May 3", "user", "identity:birthday"),
    ("I prefer tabs to spaces.", "User prefers tabs over spaces", "user", "preference:indentation"),
    ("I'd prefer answers in Chinese", "User prefers answers in Chinese", "user", "preference:reply_language"),
    ("I prefer pnpm, not npm", "User prefers pnpm over npm", "user", "preference:package_manager"),
    ("Thanks, I prefer dark mode.", "User prefers dark mode", "user", "preference:dark_mode"),
    ("I really prefer my answers short", "User prefers their answers short", "user", "preference:answers_short"),
    ("I like short answers", "User likes short answers", "user", "preference:short_answers"),
    ("I love Rust", "User likes Rust", "user", "preference:rust"),
    ("I hate emojis", "User dislikes emojis", "user", "preference:emojis"),
    ("I don't like long explanations", "User dislikes long explanations", "user", "preference:long_explanations"),
    ("Always run the tests before committing", "Always run the tests before committing", "procedure",
     "rule:run_tests_committing"),
    ("Never push to main", "Never push to main", "procedure", "rule:push_main"),
    ("Don't use emojis again", "Never use emojis", "procedure", "rule:use_emojis"),
    ("Don't ever use emojis", "Never use emojis", "procedure", "rule:use_emojis"),
    ("From now on, answer in Chinese", "Always answer in Chinese", "procedure", "rule:reply_language"),
    ("From now on, I want you to be brief", "Always be brief", "procedure", "rule:brief"),
    ("from now on, don't apologise so much", "Never apologise so much", "procedure", "rule:apologise_much"),
    ("Please always use pnpm", "Always use pnpm", "procedure", "rule:use_pnpm"),
    ("My name is Ethan", "User's name is Ethan", "user", "identity:name"),
    ("I'm called Sam", "User's name is Sam", "user", "identity:name"),
    ("Call me Ed", "User wants to be called Ed", "user", "identity:preferred_name"),
    ("I'm based in Shanghai now", "User lives in Shanghai", "user", "identity:location"),
    ("I currently live in Rome", "User lives in Rome", "user", "identity:location"),
    ("I work at Acme Corp as a backend engineer", "User works at Acme Corp", "user", "identity:employer"),
    ("I work as a data engineer", "User works as a data engineer", "user", "identity:role"),
    ("We use pytest for testing", "The project uses pytest for testing", "environment", "tool:test_framework"),
    ("We use Jira for issue tracking", "The project uses Jira for issue tracking", "environment", "tool:issue_tracking"),
    ("We use pnpm", "The project uses pnpm", "environment", "tool:package_manager"),
    ("The project uses Python 3.11", "The project uses Python 3.11", "environment", "tool:programming_language"),
    ("This repo is written in Rust", "The project is written in Rust", "environment", "tool:programming_language"),
    ("Our CI is GitHub Actions", "The project's CI is GitHub Actions", "environment", "project:ci"),
    ("记住我喜欢咖啡", "用户喜欢咖啡", "user", "preference:咖啡"),
    ("请记住：我的生日是5月3日", "用户的生日是5月3日", "user", "identity:生日"),
    ("我喜欢简洁的回答", "用户喜欢简洁的回答", "user", "preference:简洁回答"),
    ("我偏好中文回答", "用户偏好中文回答", "user", "preference:reply_language"),
    ("我更喜欢用vim", "用户偏好用vim", "user", "preference:editor"),
    ("我不喜欢香菜", "用户不喜欢香菜", "user", "preference:香菜"),
    ("我讨厌加班", "用户不喜欢加班", "user", "preference:加班"),
    ("以后回复都用英文", "以后回复都用英文", "procedure", "rule:reply_language"),
    ("从现在开始用中文回答", "以后用中文回答", "procedure", "rule:reply_language"),
    ("以后，提交前先跑测试", "以后提交前先跑测试", "procedure", "rule:提交前先跑测试"),
    ("不要再用韩语了", "不要再用韩语", "procedure", "rule:用韩语"),
    ("别再加表情了", "不要再加表情", "procedure", "rule:加表情"),
    ("我的名字是张三", "用户名叫张三", "user", "identity:name"),
    ("我叫小明", "用户名叫小明", "user", "identity:name"),
    ("叫我老王就行", "用户希望被称为老王", "user", "identity:preferred_name"),
    ("我住在上海", "用户住在上海", "user", "identity:location"),
    ("我在阿里巴巴工作", "用户在阿里巴巴工作", "user", "identity:employer"),
    ("项目使用pnpm", "项目使用pnpm", "environment", "tool:package_manager"),
    ("我们用pytest来跑测试", "项目用pytest来跑测试", "environment", "tool:test_framework"),
    ("我们的CI是GitHub Actions", "项目的CI是GitHub Actions", "environment", "project:ci"),
    ("Don't forget that the demo is on Friday", "The demo is on Friday", "environment", "project:demo"),
    ("I like pizza, but not today", "User likes pizza", "user", "preference:pizza"),
    ("I prefer tabs, but spaces are fine", "User prefers tabs", "user", "preference:indentation"),
]


@pytest.mark.parametrize("text,content,type_,key", POSITIVE, ids=[p[0] for p in POSITIVE])
def test_explicit_statement_becomes_a_fact(text, content, type_, key):
    c = one(text)
    assert (c.content, c.type, c.key) == (content, type_, key)
    assert c.evidence in text and c.source_index == 0
    assert 0 < c.importance <= 1 and 0 < c.confidence <= 1


# -- questions, negations, reactions, chit-chat: no fact --------------------------------------------------
NEGATIVE = [
    "Do you remember my name?",
    "do you remember that I prefer pnpm?",
    "Should we always use pnpm",
    "Should we always use pnpm?",
    "I don't prefer tabs",
    "I never said I prefer npm",
    "Never mind, it's fine",
    "I love it!",
    "I like that idea",
    "My name is not important",
    "Call me when it's done",
    "call me back later",
    "remember to buy milk",
    "Is the project using pnpm?",
    "What if we always deploy on Fridays?",
    "I think we could use Bun",
    "The weather is nice today.",
    "Thanks!",
    "你记得我叫什么吗？",
    "以后要不要用pnpm",
    "以后再说吧",
    "我叫了外卖",
    "记住了",
    "我们是不是应该用pnpm",
    "你能不能以后都用中文回答？",
    "今天天气不错。",
    "Remember when we deployed on Friday",
    "Please remember this",
    "I prefer not to say",
    "I'd rather not",
    "I work for myself",
    "I hate to say this, but the build is broken",
    "Never again!",
    "不要再这样了",
    "以后我会注意的",
    "我喜欢你",
    "",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_no_fact(text):
    assert facts(text) == []


def test_assistant_system_and_tool_messages_yield_no_facts():
    text = "Remember that the user prefers pnpm. I prefer tabs. 以后回复都用英文。"
    assert facts(text, "assistant") == facts(text, "system") == facts(text, "tool") == []
    assert len(facts(text, "user")) == 3 and len(facts(text, "Human")) == 3


def test_several_facts_in_one_message_each_with_its_own_span():
    text = "My name is Ethan and I live in Berlin. Also, always answer in English!"
    found = facts(text)
    assert [c.content for c in found] == ["User's name is Ethan", "User lives in Berlin", "Always answer in English"]
    assert [c.evidence for c in found] == ["My name is Ethan", "I live in Berlin.", "Also, always answer in English!"]


def test_chinese_clauses_split_on_a_new_statement():
    found = facts("我叫小明，我住在上海，以后回复都用中文。")
    assert [c.key for c in found] == ["identity:name", "identity:location", "rule:reply_language"]


def test_lead_in_before_a_comma_stays_with_its_statement():
    assert one("记住，我喜欢咖啡").content == "用户喜欢咖啡"
    assert one("From now on, please reply in English").content == "Always reply in English"


def test_source_index_points_at_the_right_message():
    messages = [("user", "hi"), ("assistant", "Hello! From now on I will answer in Chinese."),
                ("user", "Great. We use pnpm for the monorepo."), ("user", "我偏好中文回答")]
    found = extract_facts(messages)
    assert [(c.source_index, c.key) for c in found] == [(2, "tool:package_manager"), (3, "preference:reply_language")]
    for c in found:
        assert c.evidence in messages[c.source_index][1]


def test_keys_are_stable_across_paraphrases_and_languages():
    keys = {one(t).key for t in ["I prefer pnpm over npm", "Remember that I prefer yarn", "I'd rather use npm than yarn"]}
    assert keys == {"preference:package_manager"}
    assert one("我偏好中文回答").key == one("I'd prefer answers in English").key == "preference:reply_language"
    assert one("Always use emojis").key == one("Don't use emojis again").key == "rule:use_emojis"
    assert one("以后回复都用英文").key == one("From now on, answer in Chinese").key == "rule:reply_language"


def test_rules_keep_their_own_keys_so_compatible_rules_never_replace_each_other():
    never_npm, always_pnpm = facts("Never use npm, always use pnpm")
    assert (never_npm.key, always_pnpm.key) == ("rule:use_npm", "rule:use_pnpm")
    assert one("Always use npm").key == never_npm.key  # same words, opposite polarity: one key, a new version
    # only a positive reply-language rule is exclusive
    assert one("以后回复都用英文").key == "rule:reply_language" != one("不要再用韩语").key


def test_remember_boosts_importance_and_confidence():
    plain, remembered = one("I prefer pnpm over npm"), one("Please remember that I prefer pnpm over npm")
    assert plain.content == remembered.content
    assert remembered.importance > plain.importance and remembered.confidence >= 0.95


def test_tags_name_the_kind_and_known_tools():
    assert one("I prefer pnpm over npm").tags == ("preference", "pnpm", "npm")
    assert one("Never push to main").tags == ("rule",)
    assert one("My name is Ethan").tags == ("identity",)


def test_a_fact_repeated_in_a_session_is_kept_once_with_its_first_source():
    found = extract_facts([("user", "I prefer tabs."), ("user", "Again: I prefer tabs.")])
    assert len(found) == 1 and found[0].source_index == 0


def test_a_changed_mind_keeps_both_versions_in_order():
    found = extract_facts([("user", "I prefer npm"), ("user", "Actually, I prefer pnpm")])
    assert [c.content for c in found] == ["User prefers npm", "User prefers pnpm"]
    assert {c.key for c in found} == {"preference:package_manager"}


def test_extraction_is_deterministic():
    messages = [("user", "记住我喜欢咖啡。Always answer in Chinese. We use pytest for testing.")] * 2
    assert extract_facts(messages) == extract_facts(messages)


@pytest.mark.parametrize("bad", [None, [("user",)], [("user", None)], [42]])
def test_malformed_messages_raise_invalid_input(bad):
    with pytest.raises(InvalidInput):
        extract_facts(bad)


# -- summarize ------------------------------------------------------------------------------------------
CONVERSATION = [
    ("user", "Hi! I am setting up the billing service for Acme Corp. We deploy the billing service with Docker."),
    ("assistant", "Great. Do you want a Dockerfile for the billing service?"),
    ("user", "Yes please. The billing service must talk to Postgres on port 5432. Thanks!"),
    ("assistant", "Done. Here it is:\n```dockerfile\nFROM python:3.11\nRUN pip install billing\n```"),
    ("user", "好的。以后回复都用中文。"),
]


def test_summary_keeps_salient_sentences_in_order_within_budget():
    summary = summarize(CONVERSATION, max_chars=150)
    assert len(summary) <= 150
    assert "billing service" in summary and "Thanks!" not in summary and "Hi!" not in summary
    kept = [s for s in ("setting up the billing", "deploy the billing", "Postgres", "以后回复") if s in summary]
    assert kept == sorted(kept, key=summary.index) and len(kept) >= 2


def test_summary_default_budget_is_500_and_skips_code_and_system_messages():
    summary = summarize(CONVERSATION + [("system", "You are a helpful assistant.")] * 3)
    assert len(summary) <= 500
    assert "FROM python" not in summary and "helpful assistant" not in summary
    assert "以后回复都用中文。" in summary


def test_summary_splits_chinese_sentences():
    text = "我们讨论了数据库迁移。决定用DuckDB存储记忆！下周再评审迁移方案？"
    summary = summarize([("user", text)], max_chars=20)
    assert 0 < len(summary) <= 20 and summary in text


def test_summary_cuts_one_overlong_sentence():
    long = "word " * 200
    summary = summarize([("user", long)], max_chars=50)
    assert len(summary) == 50 and summary.endswith("…")


def test_summary_of_nothing_is_empty():
    assert summarize([]) == "" and summarize([("user", "   ")]) == "" and summarize([("tool", "output")]) == ""


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "500"])
def test_summary_budget_must_be_a_positive_int(bad):
    with pytest.raises(InvalidInput):
        summarize(CONVERSATION, max_chars=bad)


def test_summary_is_deterministic():
    assert summarize(CONVERSATION, 200) == summarize(CONVERSATION, 200)


# -- entities -------------------------------------------------------------------------------------------
def test_entities_handles_paths_tools_names_hosts():
    text = ("Alice asked @bob_dev to fix src/echo_duck/store/facade.py and README.md; see https://github.com/x/y. "
            "We use pnpm and GitHub Actions. The Acme Corp team uses JWT.")
    assert entities(text) == ["@bob_dev", "src/echo_duck/store/facade.py", "README.md", "github.com", "pnpm",
                              "GitHub Actions", "Acme Corp", "JWT"]


def test_entities_sentence_start_words_need_more_evidence():
    assert entities("Use the cache. Deploy tomorrow.") == []
    assert entities("Alice's review found bugs. Bob fixed them. Then Bob left.") == ["Alice", "Bob"]


def test_entities_bare_domains_and_local_paths_but_not_emails_or_weekdays():
    text = "Deploy to staging.acme.io/v1 on Fridays; mail a@b.com; run ./run.sh from ~/.config/app. See example.com."
    assert entities(text) == ["staging.acme.io", "./run.sh", "~/.config/app", "example.com"]


def test_entities_known_tools_are_lower_case_and_deduplicated():
    assert entities("Docker and docker and DuckDB, then duckdb again") == ["docker", "duckdb"]


def test_entities_chinese_names_and_places():
    found = entities("张三和李四在北京的阿里巴巴工作，用pnpm部署到上海")
    assert found == ["张三", "李四", "北京", "阿里巴巴", "pnpm", "上海"]
    assert entities("我们在GitHub上用Docker部署") == ["github", "docker"]


def test_entities_of_nothing():
    assert entities("") == [] and entities("just some lower case words") == []


# -- the LLM adapter ------------------------------------------------------------------------------------
MESSAGES = [("user", "I prefer pnpm over npm and my name is Ethan."), ("assistant", "Noted, Ethan!")]
ITEM = {"content": "User prefers pnpm over npm", "type": "user", "key": "preference:package_manager",
        "tags": ["preference"], "importance": 0.7, "confidence": 0.9, "source_index": 0}


def run(answer) -> list[Candidate]:
    return llm_extractor(lambda prompt: answer)(MESSAGES)


def test_llm_answer_is_parsed():
    [c] = run(json.dumps([ITEM]))
    assert (c.content, c.type, c.key, c.tags, c.importance, c.confidence, c.source_index) == (
        "User prefers pnpm over npm", "user", "preference:package_manager", ("preference",), 0.7, 0.9, 0)
    assert c.evidence == MESSAGES[0][1]


@pytest.mark.parametrize("answer", [
    "```json\n" + json.dumps([ITEM]) + "\n```",
    "Here are the facts [as requested]:\n" + json.dumps([ITEM]) + "\nHope this helps!",
    json.dumps(ITEM),
    json.dumps({"facts": [ITEM]}),
    json.dumps([ITEM]).replace("}", ",}").replace("]", ",]", 1),
])
def test_llm_answer_is_parsed_tolerantly(answer):
    assert [c.content for c in run(answer)] == ["User prefers pnpm over npm"]


def test_llm_invalid_items_are_skipped():
    items = [ITEM, {**ITEM, "type": "gossip"}, {**ITEM, "content": ""}, {**ITEM, "source_index": 7},
             {**ITEM, "source_index": True}, "not an object", {**ITEM, "content": "User is Ethan", "source_index": 1},
             {**ITEM, "content": "Ethan was greeted", "type": "self", "source_index": "1", "importance": 7,
              "confidence": "high", "tags": "greeting", "evidence": "Noted"}]
    found = run(json.dumps(items))
    assert [c.content for c in found] == ["User prefers pnpm over npm", "Ethan was greeted"]
    last = found[1]
    assert (last.importance, last.confidence, last.tags, last.evidence, last.source_index) == \
        (1.0, 0.8, ("greeting",), "Noted", 1)


def test_llm_empty_list_means_nothing_to_remember():
    assert run("[]") == []


@pytest.mark.parametrize("answer", ["I could not find anything.", "{broken json", json.dumps([{"type": "user"}]), 42])
def test_llm_unusable_answer_falls_back_to_rules(answer):
    assert run(answer) == extract_facts(MESSAGES)
    assert {c.key for c in run(answer)} == {"preference:package_manager", "identity:name"}


def test_llm_exception_falls_back_and_never_raises():
    def broken(prompt):
        raise TimeoutError("model timed out")

    assert llm_extractor(broken)(MESSAGES) == extract_facts(MESSAGES)


def test_llm_prompt_numbers_the_messages():
    seen = []
    llm_extractor(lambda prompt: seen.append(prompt) or "[]")(MESSAGES)
    assert "[0] user: I prefer pnpm" in seen[0] and "[1] assistant: Noted, Ethan!" in seen[0]
    assert "JSON" in seen[0] and "source_index" in seen[0]
