"""Kanji variant forms folded to the Japanese standard form before any comparison.

OCR engines trained largely on Chinese text read a Japanese character in its
traditional form when the two differ by a stroke (徳 read as 德, 戸 as 戶):
a person reads both as the same character, so neither counts as a misread.
The table is the standard kyūjitai → shinjitai pairs (and a few Chinese
codepoints for the same glyph, 户 and 吴) that NFKC leaves apart. Simplified
forms that change the character's shape (庆 for 慶) are not folded: reading
one is not a glyph variant but another character.
"""

from __future__ import annotations

TRADITIONAL = (
    "德豐黑戶户步樣澤濱關國學邊廣齋縣鐵徵眞對應來實發變戰經濟會氣寫圖讀賣數樂藥圓區亞"
    "惡壓圍醫榮鹽櫻假價畫繪覺觀歸據舊擧檢權險驗嚴號劑殘辭濕壽收從澁獸縱處稱條乘狀讓觸"
    "盡聲靜攝專淺踐錢潛雙總騷藏續體瀧擔單團彈斷遲晝鑄廳聽鎭點傳黨當燈鬪獨屆貳惱腦廢麥"
    "髮拔蠻祕拂佛竝辯舖寶沒萬滿默譯與豫餘搖謠賴亂覽龍兩獵綠淚壘勵禮靈齡戀爐勞樓錄灣將"
    "壯莊裝奬臟棧兒爭淨穩隱歐毆驅樞徑莖輕繼鷄藝劍儉圈卷勸歡陷顯稻鄰惠鄕曉勳薰齊歲雜參"
    "蠶慘贊絲齒舍釋肅繩壤孃疊釀粹醉隨髓瀨竊纖禪巢搜插屬墮帶滯擇脫歎癡蟲敕遞轉盜霸拜晚"
    "甁倂峯飜每戾曆歷鍊郞吳吴娛姬龜黃燒涉剩緣艷"
)
STANDARD = (
    "徳豊黒戸戸歩様沢浜関国学辺広斎県鉄徴真対応来実発変戦経済会気写図読売数楽薬円区亜"
    "悪圧囲医栄塩桜仮価画絵覚観帰拠旧挙検権険験厳号剤残辞湿寿収従渋獣縦処称条乗状譲触"
    "尽声静摂専浅践銭潜双総騒蔵続体滝担単団弾断遅昼鋳庁聴鎮点伝党当灯闘独届弐悩脳廃麦"
    "髪抜蛮秘払仏並弁舗宝没万満黙訳与予余揺謡頼乱覧竜両猟緑涙塁励礼霊齢恋炉労楼録湾将"
    "壮荘装奨臓桟児争浄穏隠欧殴駆枢径茎軽継鶏芸剣倹圏巻勧歓陥顕稲隣恵郷暁勲薫斉歳雑参"
    "蚕惨賛糸歯舎釈粛縄壌嬢畳醸粋酔随髄瀬窃繊禅巣捜挿属堕帯滞択脱嘆痴虫勅逓転盗覇拝晩"
    "瓶併峰翻毎戻暦歴錬郎呉呉娯姫亀黄焼渉剰縁艶"
)
FOLD = str.maketrans(TRADITIONAL, STANDARD)


def fold_variants(text: str) -> str:
    """Return `text` with each traditional kanji form replaced by its Japanese standard form."""
    return text.translate(FOLD)
