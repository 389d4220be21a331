"""Furniture words of the five later scenes, per language (merged into `page.WORDS`)."""

from __future__ import annotations

SCENE_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "unit": "Unit",
        "practice": "Practice",
        "instructions": "Read carefully and choose the best answer.",
        "answer": "Answer",
        "check": "Check your work",
        "board_title": "Today's problem",
        "lecture": "Lecture",
        "review": "Review question",
        "notes": "Notes",
        "notebook": "Study notebook",
        "game": "QUIZ QUEST",
        "stage": "Stage",
        "score": "Score",
        "select": "Select",
    },
    "ja": {
        "unit": "単元",
        "practice": "練習問題",
        "instructions": "よく読んで、最も適切なものを選びなさい。",
        "answer": "答え",
        "check": "見直しをしよう",
        "board_title": "今日の問題",
        "lecture": "講義",
        "review": "確認問題",
        "notes": "ノート",
        "notebook": "学習ノート",
        "game": "クイズクエスト",
        "stage": "ステージ",
        "score": "スコア",
        "select": "決定",
    },
}
