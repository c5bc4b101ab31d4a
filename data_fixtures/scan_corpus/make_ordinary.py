"""Ordinary assistant conversation, written for the scanner's benign training (family ordinary_assistant).

Requests a user makes of an assistant, and the advice, lists and encouragement an assistant gives back: text that
is full of imperatives addressed to "you" and is not an attack. Generated from hand-written templates and topics
(deterministic: seed 19); one group per template, so cross-validation holds a whole shape out.
"""
import json, random
rng = random.Random(19)
topics = ["training for a half marathon", "a weekend trip to Lisbon", "learning to bake sourdough", "a small vegetable garden",
 "preparing for a job interview", "moving to a new apartment", "a budget for the next six months", "a birthday party for a ten-year-old",
 "getting better sleep", "learning Japanese", "adopting a rescue dog", "starting a podcast", "a road trip along the coast",
 "decluttering the garage", "writing a cover letter", "a beginner strength routine", "hosting a dinner for eight", "choosing a used car",
 "a science fair project", "learning watercolor painting", "planning a small wedding", "studying for a statistics exam",
 "keeping houseplants alive", "a first 10k race", "saving for a house deposit", "organising family photos", "a camping weekend",
 "reducing screen time", "a book club reading list", "learning to play the ukulele", "meal prep for a busy week",
 "negotiating a salary", "a volunteer day at the food bank", "teaching a child to ride a bike", "a home coffee setup",
 "caring for an elderly parent", "planning a garden party", "writing a short story", "a morning routine", "a museum visit with kids"]
goals = ["stay consistent", "keep costs down", "avoid burning out", "make it fun", "track your progress", "save time",
 "stay organised", "feel less stressed", "get started this week", "build a habit that sticks"]
styles = ["a friendly tour guide", "a sports commentator", "a 1920s newspaper", "a cheerful kindergarten teacher",
 "Shakespeare", "a nature documentary narrator", "a pirate", "a noir detective novel"]
langs_req = {
 "zh": ["帮我把这段话改得更正式一点。", "请用三个要点总结下面这篇文章。", "给我一个{t}的一周计划。", "能推荐几本适合初学者的书吗？", "帮我写一封请假邮件，语气礼貌一点。"],
 "es": ["¿Puedes ayudarme a planear {t}?", "Resume este artículo en tres puntos.", "Escribe un correo amable para cancelar la reunión del jueves.", "Dame ideas para {t}."],
 "de": ["Kannst du mir bei {t} helfen?", "Fasse den folgenden Text in drei Stichpunkten zusammen.", "Schreib eine kurze, höfliche Absage für das Treffen am Freitag."],
 "fr": ["Peux-tu m'aider à organiser {t} ?", "Résume cet article en trois points.", "Écris un message poli pour décaler notre rendez-vous."],
 "ja": ["{t}の計画を手伝ってください。", "この文章をもっと丁寧な言い方に直してください。", "次の記事を三行で要約して。"],
}
user_templates = [
 "Can you help me with {t}? I want to {g}.", "Give me a step-by-step plan for {t}.", "What are the most common mistakes people make with {t}?",
 "Rewrite this paragraph so it sounds more professional.", "Summarize the following article in three bullet points.",
 "Translate this message into Spanish and keep the tone casual.", "Write a short poem about {t}.",
 "Respond in the style of {s} and describe a rainy Monday.", "Make the list shorter and put the cheapest option first.",
 "Rewrite it without the headings so it reads as one paragraph.", "Can you turn these notes into a table with three columns?",
 "Explain it again like I'm twelve.", "Use simpler words and fewer bullet points this time.",
 "Write the introduction for an essay about {t}. Keep it under 150 words.", "What should I pack for {t}?",
 "I have a question about {t}: how much time should I set aside each week?", "Draft a friendly reminder email about {t}.",
 "Ignore the last list, I changed my mind about the budget. Let's start over with $500.",
 "Forget the previous itinerary; we're flying into Porto instead.", "From now on, answer me in short sentences please.",
 "Pretend you are my interviewer and ask me the first question.", "Play the role of a strict chess coach and review my opening.",
]
assistant_templates = [
 "Great question! Here are some tips for {t}: 1. Start small. 2. Set a fixed time each week. 3. Write down what worked.",
 "Remember to be patient with yourself, and don't hesitate to ask for help if {t} feels overwhelming.",
 "You got this! Keep going, and don't let one bad week stop you from {g_ing}.",
 "It's always a good idea to {g} before you commit to {t}.", "I'm glad I could help. Feel free to ask if you have more questions about {t}.",
 "Here's a simple table comparing your options for {t}: | Option | Cost | Time | ...",
 "Sure! Here's a revised version that sounds more formal: ...", "Here's a summary in three bullet points: ...",
 "I'm a language model, so I can't book anything for you, but here's how you can do it yourself: first, ...",
 "That's a wonderful plan! To {g}, make sure you schedule rest days and track how you feel.",
 "Congratulations on getting started with {t}! The most important thing is to {g}.",
 "Don't worry if it takes a few tries. Most people need a couple of weeks before {t} feels natural.",
 "Make sure you check the opening hours before you go, and bring a reusable water bottle.",
 "Before you start, write down your goal and the date you want to reach it. That makes it easier to {g}.",
 "If you have any other questions or concerns, feel free to ask. Good luck with {t}!",
 "Absolutely. Here's the list again without the headings, all on one line.",
 "To keep costs down, compare at least three quotes and ask each one what is included.",
]
# Everyday memories of the kind the store keeps: project procedures and facts, personal preferences and plans.
tools = ["ruff", "pytest", "the linter", "black", "mypy", "the unit tests", "npm run build", "terraform plan", "the smoke tests", "prettier"]
events = ["every commit", "pushing", "opening a pull request", "a release", "merging to main", "deploying", "tagging a version"]
procedures = [
 "Run {tool} before {event}", "Always run {tool} before {event}", "Use pnpm, not npm, in the {repo} repo",
 "Never deploy the {repo} service on a Friday afternoon", "Write commit messages in English in the {repo} repo",
 "Ask before deleting anything in the {repo} bucket", "Keep pull requests under 400 lines for {repo}",
 "Tag {person} on anything that touches billing", "Use tabs in the Go code of {repo}", "Squash merge feature branches in {repo}",
 "Rebase on main before {event}", "Update the changelog before {event}", "Reply in Chinese unless {person} writes in English",
 "Remind me to water the plants on Sundays", "Book the dentist for {person} in March", "Send {person} the slides after the meeting",
 "Don't schedule meetings before 10am", "Keep answers short and put the conclusion first", "Call {person} back about the invoice",
]
facts = ["The {repo} service listens on port {port}", "{person} owns the {repo} repo", "The staging database for {repo} runs in Frankfurt",
 "{person} is allergic to peanuts", "{person}'s birthday is on {day}", "The {repo} nightly build starts at 2am",
 "We moved the {repo} docs to the wiki", "{person} prefers video calls over phone calls", "The {repo} repo uses Python 3.11"]
repos = ["billing", "web", "search", "mobile", "data-pipeline", "auth", "reports", "infra"]
people = ["Ana", "Bo", "Mei", "Carlos", "Priya", "Tom", "Lena", "Kenji"]
days = ["2 November", "14 March", "30 June", "8 August"]


def ing(g):
    w = g.split()
    v = w[0]
    v = v[:-1] + "ing" if v.endswith("e") and not v.endswith("ee") else v + ("ting" if v in ("get", "set") else "ing")
    return " ".join([v] + w[1:])
out = []
for k, tpl in enumerate(user_templates):
    for _ in range(12):
        t, g, s = rng.choice(topics), rng.choice(goals), rng.choice(styles)
        out.append(dict(text=tpl.format(t=t, g=g, s=s), label="benign", family="ordinary_assistant", lang="en", group=f"ord-user-{k:02d}"))
for k, tpl in enumerate(assistant_templates):
    for _ in range(12):
        t, g = rng.choice(topics), rng.choice(goals)
        out.append(dict(text=tpl.format(t=t, g=g, g_ing=ing(g)), label="benign", family="ordinary_assistant", lang="en", group=f"ord-assistant-{k:02d}"))
for k, tpl in enumerate(procedures + facts):
    for _ in range(6):
        out.append(dict(text=tpl.format(tool=rng.choice(tools), event=rng.choice(events), repo=rng.choice(repos),
                                        person=rng.choice(people), port=rng.choice([5432, 8080, 6379, 9200]),
                                        day=rng.choice(days)),
                        label="benign", family="ordinary_assistant", lang="en", group=f"ord-memory-{k:02d}"))
zh_topics = {"zh": ["半程马拉松训练", "去里斯本的周末旅行", "学做酸面包", "搬家", "面试准备"], "es": ["un viaje a Lisboa", "una fiesta de cumpleaños", "el huerto"],
             "de": ["den Umzug", "eine Geburtstagsfeier", "das Training"], "fr": ["un voyage à Lisbonne", "une fête d'anniversaire", "le déménagement"],
             "ja": ["引っ越し", "マラソンの練習", "誕生日パーティー"]}
for lang, tpls in langs_req.items():
    for k, tpl in enumerate(tpls):
        for t in zh_topics[lang]:
            out.append(dict(text=tpl.format(t=t), label="benign", family="ordinary_assistant", lang=lang, group=f"ord-{lang}-{k:02d}"))
seen, final = set(), []
for r in out:
    if r["text"] not in seen:
        seen.add(r["text"]); final.append(r)
with open(__import__("pathlib").Path(__file__).with_name("train_ordinary.jsonl"), "w", encoding="utf-8") as f:
    for r in final:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(len(final))
