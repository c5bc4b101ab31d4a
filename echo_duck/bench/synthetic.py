"""Synthetic but realistic bilingual memories for speed benchmarks (fixed seed, ~60% EN / 40% ZH).

Short facts, preferences, commands and paths, as an agent would store them, plus a query set of
four kinds: keyword-ish, paraphrase, Chinese, cross-lingual.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PROJECTS = ["atlas", "borealis", "cobalt", "delta-api", "ember", "fjord", "granite", "harbor", "ion", "juniper",
            "kestrel", "lumen", "meridian", "nimbus", "onyx", "pulsar", "quartz", "raven", "sierra", "tundra"]
TOOLS = ["pnpm", "npm", "yarn", "poetry", "uv", "cargo", "gradle", "maven", "bazel", "make", "docker", "podman",
         "kubectl", "terraform", "ansible", "pytest", "jest", "vitest", "ruff", "eslint", "prettier", "black"]
DATABASES = ["PostgreSQL 15", "PostgreSQL 16", "MySQL 8", "SQLite", "DuckDB", "Redis 7", "MongoDB 6", "ClickHouse"]
LANGS = ["Python", "TypeScript", "Go", "Rust", "Java", "Kotlin", "C++", "Ruby"]
PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kai", "Lena"]
ZH_PEOPLE = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴婷"]
CITIES = ["Berlin", "Shanghai", "Tokyo", "Lisbon", "Toronto", "Singapore", "Beijing", "Shenzhen"]
ZH_CITIES = ["上海", "北京", "深圳", "杭州", "成都", "广州"]
DIRS = ["src", "lib", "app", "services", "infra", "scripts", "configs", "docs", "tests", "deploy"]
FILES = ["settings.yaml", "docker-compose.yml", "Makefile", "pyproject.toml", "package.json", "main.go",
         "config.toml", ".env.example", "schema.sql", "README.md", "Cargo.toml", "values.yaml"]

EN_TEMPLATES = [
    "The {project} service uses {db} in production",
    "User prefers {lang} for new scripts",
    "Run `{tool} test` before pushing to the {project} repo",
    "{person} owns the {project} deployment pipeline",
    "The config for {project} lives in {dir}/{file}",
    "Always use {tool} instead of the default tool in {project}",
    "The staging cluster for {project} is in {city}",
    "User's timezone follows {city}; schedule meetings accordingly",
    "{project} builds with {tool}; the lock file must be committed",
    "Never run database migrations on {project} during business hours",
    "User dislikes long answers; keep {lang} explanations short",
    "The on-call rotation for {project} is managed by {person}",
    "Logs for {project} are shipped to {db} every night",
    "Use port {port} for the local {project} dev server",
    "The {project} API rate limit is {port} requests per minute",
]
ZH_TEMPLATES = [
    "项目 {project} 使用 {tool} 管理依赖",
    "用户喜欢用{zh_lang}写新脚本",
    "{zh_person} 负责 {project} 的部署流程",
    "{project} 的配置文件在 {dir}/{file}",
    "{project} 的测试环境部署在{zh_city}",
    "不要在工作时间对 {project} 做数据库迁移",
    "用户偏好简短的回答，代码示例用{zh_lang}",
    "{project} 的日志每天晚上同步到 {db}",
    "本地开发时 {project} 服务使用 {port} 端口",
    "提交代码前先运行 {tool} 检查 {project}",
    "用户所在的城市是{zh_city}，安排会议要注意时区",
    "{project} 的值班表由 {zh_person} 维护",
]
ZH_LANGS = {"Python": "Python", "TypeScript": "TypeScript", "Go": "Go 语言", "Rust": "Rust", "Java": "Java",
            "Kotlin": "Kotlin", "C++": "C++", "Ruby": "Ruby"}


@dataclass(frozen=True)
class Query:
    kind: str  # keyword | paraphrase | chinese | crosslingual
    text: str


def memories(n: int, seed: int = 7) -> list[dict]:
    """n memory records for remember_many (content, type, key, tags, importance)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        chinese = rng.random() < 0.4
        template = rng.choice(ZH_TEMPLATES if chinese else EN_TEMPLATES)
        lang = rng.choice(LANGS)
        content = template.format(project=rng.choice(PROJECTS), tool=rng.choice(TOOLS), db=rng.choice(DATABASES),
                                  lang=lang, zh_lang=ZH_LANGS[lang], person=rng.choice(PEOPLE),
                                  zh_person=rng.choice(ZH_PEOPLE), city=rng.choice(CITIES), zh_city=rng.choice(ZH_CITIES),
                                  dir=rng.choice(DIRS), file=rng.choice(FILES), port=rng.randint(1000, 9999))
        kind = "user" if ("User" in template or "用户" in template) else rng.choice(["environment"] * 6 + ["procedure", "self"])
        out.append({"content": f"{content} (#{i})", "type": kind, "tags": [rng.choice(["ops", "dev", "prefs", "infra"])],
                    "importance": round(rng.uniform(0.2, 0.9), 2)})
    return out


def queries(n: int = 40, seed: int = 11) -> list[Query]:
    """n queries, a quarter of each kind."""
    rng = random.Random(seed)
    kinds = {
        "keyword": lambda: rng.choice([f"{rng.choice(TOOLS)} {rng.choice(PROJECTS)}", f"{rng.choice(DIRS)}/{rng.choice(FILES)}",
                                       f"port {rng.randint(1000, 9999)}", rng.choice(FILES)]),
        "paraphrase": lambda: rng.choice([f"which database does {rng.choice(PROJECTS)} run on?",
                                          f"who is responsible for deploying {rng.choice(PROJECTS)}?",
                                          "what language does the user like for scripts?",
                                          f"where is the test cluster of {rng.choice(PROJECTS)}?"]),
        "chinese": lambda: rng.choice([f"{rng.choice(PROJECTS)} 用什么管理依赖", "用户喜欢什么编程语言",
                                       f"谁负责 {rng.choice(PROJECTS)} 的部署", "数据库迁移什么时候可以做"]),
        "crosslingual": lambda: rng.choice([f"{rng.choice(PROJECTS)} 的数据库是什么", "what city is the user in?",
                                            f"{rng.choice(PROJECTS)} 的配置文件在哪里", "who maintains the on-call schedule?"]),
    }
    names = list(kinds)
    return [Query(names[i % 4], kinds[names[i % 4]]()) for i in range(n)]
