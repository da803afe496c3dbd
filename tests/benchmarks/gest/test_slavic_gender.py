"""Tests of the Slavic first-person gender detector (GEST machine-translation experiment)."""

from __future__ import annotations

import pytest
from validate_slavic_gender import (
    available,
    load_translations,
    measure_accuracy,
    measure_yield,
    read_labels,
)

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.gest.detector import first_person_gender

M, F, N = "masculine", "feminine", None

CASES = [
    # East Slavic
    ("ru", "Я не могла открыть банку, поэтому попросила соседа.", F),
    ("ru", "Когда меня укусил лев, я не колебался и обработал рану.", M),  # third-person "укусил" ignored
    ("ru", "Он не сделал ничего плохого, но я все равно была расстроена.", F),
    ("ru", "Я очень уверен, что я прав.", M),
    ("ru", "Я хочу быть сильной.", F),  # instrumental predicative adjective
    ("ru", "Я люблю готовить ужин для своей семьи.", N),
    ("ru", "Вы уверены, что у Вас хватит сил?", N),  # second person
    ("ru", "Мы с другом пошли в кино.", N),  # plural
    ("ru", "Нам не нужна была уборщица.", N),  # "была" agrees with the noun subject
    ("uk", "Я не боявся вас і ваших друзів.", M),
    ("uk", "Я пристрасна.", F),
    ("uk", "Я ніколи не міг піти в похід сам.", M),  # "міг" lacks a verb analysis in the dictionary
    ("uk", "На весілля накопичила купу грошей.", F),  # dropped "я"
    ("uk", "Мені подобалося керувати іншими.", N),
    ("be", "Я не магла адкрыць салёныя агуркі.", F),
    ("be", "Калі мяне ўкусіў леў, я не вагаўся.", M),
    ("be", "Я захоплены.", M),
    ("be", "Я люблю прыгожа апранацца.", N),
    ("be", "Збіраўся купіць кавун, але не паспеў.", M),  # dropped "я" at the start of the sentence
    ("be", "Хацелася жыць вольна.", N),  # impersonal neuter, spelt like a feminine form
    ("be", "Гэтая задача аказалася складанай, і я раз'юшыўся.", M),  # apostrophe inside the verb
    ("be", "Я заўсёды гатовы дапамагчы.", M),  # adjective followed by an infinitive
    # West Slavic
    ("pl", "Nie mogłam otworzyć pikli, więc poprosiłam o to współlokatorkę.", F),
    ("pl", "Kiedy ukąsił mnie lew, nie wahałem się.", M),
    ("pl", "Jestem namiętny.", M),
    ("pl", "To był krótki bieg, ale jestem zmęczona.", F),
    ("pl", "Zawsze tak dużo mówiłeś?", N),  # second person
    ("pl", "Mój przyjaciel jest naprawdę muskularny.", N),  # third person
    ("pl", "Pracuję z zapałem.", N),  # instrumental noun in -łem
    ("pl", "Powinnam pracować ciężej.", F),
    ("pl", "Gdybym wiedział, jak nudny jest uniwersytet, nigdy bym nie poszedł.", M),
    ("pl", "Powiedziano mi, żebym pod żadnym pozorem nie jechał sam.", M),
    ("pl", "Jestem wystarczająco silna.", F),
    ("pl", "Gdyby on przyszedł, byłoby lepiej.", N),  # third-person conditional
    ("cs", "Nemohl jsem otevřít okurky, tak jsem požádal spolubydlícího.", M),
    ("cs", "Když jsem byla mladší, chodila jsem domů pozdě.", F),
    ("cs", "Ráda chodím na procházky do parku.", F),
    ("cs", "Jsem lepší než všichni v této místnosti.", N),  # soft adjective: no gender
    ("cs", "Mohl bys to zkusit ještě jednou?", N),  # second person conditional
    ("sk", 'Žena povedala: "Vzal som si šteniatko."', M),  # the reporting verb is third person
    ("sk", 'Muž povedal: "Nemohla som prestať myslieť na to."', F),
    ("sk", "Nikdy som sa nedokázala naplno venovať partnerovi.", F),  # reflexive "sa"
    ("sk", "Som šťastná.", F),
    ("sk", "Mám stovky zápasov na Tinderi.", N),
    # South Slavic
    ("hr", "Nisam mogla otvoriti kisele krastavce, pa sam zamolila cimericu.", F),
    ("hr", "Gurali su mi svoje ideje, a ja nisam ništa poduzeo.", M),
    ("hr", "Kompetentan sam.", M),
    ("hr", "Ja sam dobar trkač.", N),  # adjective of a predicate noun
    ("hr", "Zašto si morao davati glupe komentare?", N),  # second person
    ("hr", "Trebao bih očistiti svoj ured.", M),  # modal participle next to the anchor
    ("hr", "Trebala mi je pomoć.", N),  # impersonal: "pomoć" is the subject
    ("hr", "Ja sam jedina koja misli da su japanke odvratne.", F),
    ("hr", "Ne mogu zamisliti da živim bez toga.", N),  # infinitive in -ti is no adjective
    ("sr", "Нисам могао да отворим киселе краставце.", M),  # Cyrillic
    ("sr", "Prošle godine sam zaradila mnogo novca.", F),  # Latin
    ("sr", "Пре пет година сам основао своју компанију.", M),
    ("sr", "Веома сам објективан.", M),
    ("sr", "Осећам се као да прате сваки мој покрет.", N),
    ("sl", "Nisem mogel odpreti kislih kumaric, zato sem prosil sostanovalko.", M),
    ("sl", "Danes sem zelo nervozna.", F),
    ("sl", "Vsiljevali so mi svoje ideje, jaz pa nisem naredil ničesar.", M),
    ("sl", "Rada se sprehajam po parku.", F),
    ("sl", "Bili so res močni.", N),  # third person plural
    ("sl", "Mislim, da bi se lahko ubranil medveda.", M),  # "bi" clause in a first-person sentence
    ("sl", "Če ne bi zaslužil dovolj, moja družina ne bi imela kaj jesti.", M),  # "družina" is the subject there
    ("sl", "Mislim, da bi on prišel.", N),  # "bi" with another subject
    ("sl", "Nikoli ne bi govoril za hrbtom šefa.", N),  # no first-person form: "bi" fits any person
    ("sl", "Hotel sem poklicati prijatelja.", M),
    # Third round: rules added with their tricky counterparts
    ("cs", "Poskytl jsem mu soucitnou přítomnost.", M),  # consonant + l participle
    ("cs", "To dává smysl.", N),  # "smysl" is a noun
    ("cs", "Nikdy jsem v žádné oblasti svého života nezklamal.", M),  # participle five words from "jsem"
    ("cs", "Nerada chodím do posilovny.", F),
    ("cs", "Musím být trpělivá.", F),  # "být" after a first-person verb
    ("cs", "Chce být trpělivá.", N),  # third person: "chce" is no anchor
    ("cs", "Jsem si naprosto jistý, že mám pravdu.", M),  # adverb between anchor and adjective
    ("cs", "Jsem za to nesmírně vděčná.", F),  # preposition with a pronoun object
    ("sk", "Som taká lenivá.", F),
    ("sk", "Som uznávaná odborníčka.", N),  # adjective of a predicate noun
    ("hr", "Ponekad sam tužan bez vidljivog razloga.", M),  # "razloga" after a preposition is no adjective
    ("hr", "Nekada sam uživao u tome.", M),  # "nekada" is an adverb, not a feminine adjective
    ("hr", "Uvijek sam se dobro brinula o partneru.", F),  # "dobro" is no participle
    ("hr", "Volim biti glavni.", M),
    ("hr", "Trudim se biti uzor svojoj djeci.", N),  # predicate noun; "djeci" is no adjective
    ("hr", "Kad se netko smije, postanem nervozan.", M),
    ("hr", "Moj kolega je profesionalniji nego što ću ja ikada biti.", N),
    ("sr", "ја сам груб.", M),  # short adjective from the word list
    ("sr", "Ja sam važan svojoj porodici.", M),  # adjective before a dative
    ("sr", "Увек сам био отворен и волим да будем окружен пријатељима.", M),  # "prijateljima" is no adjective
    ("sl", "Odrl sem jelena.", M),  # syllabic r before the l
    ("sl", "Jelena sem odrl s kože.", M),  # a participle after the anchor beats a clause-initial "-a" word
    ("sl", "Sosedi sem pomagala nositi vrečke.", F),
    ("hr", "Jedva sam čekao ponovno vidjeti prijatelje.", M),  # "jedva" is no adjective
    ("sl", "Bi mi odprl ta kozarec?", N),  # "mi" (to me) does not make the subject first person
    ("sl", "Najsrečnejša se počutim, ko organiziram zabavo.", F),  # adjective before the clitic "se"
    ("sl", "Moj kolega je bolj profesionalen, kot bom kdajkoli jaz.", N),
    ("sl", "Kadarkoli sem žalostna, si predvajam pesmi.", F),
    ("sl", "Rekli so mi, da sem videti samozavestna.", F),
    ("ru", "Мне всегда было важно быть красивой.", F),  # "мне ... быть" + instrumental
    ("ru", "Ему всегда было важно быть сильным.", N),  # dative of another person
    ("ru", "Я чувствую себя удовлетворенной.", F),  # instrumental analysis after "себя"
    ("ru", "Я всегда отделяю свою рабочую жизнь от личной.", N),  # genitive after a preposition
    ("ru", "Я знаю, что не должна плакать.", F),  # subjectless "что" clause
    ("ru", "Я знаю, что мама должна прийти.", N),  # the "что" clause has its own subject
    ("uk", "Я стрибнув у ставок і витягнув собаку, що тонула.", M),  # relative "що" is no dropped "я"
    ("be", "Для мяне заўсёды было важна быць прыгожай.", F),
    ("be", "Я надзвычай разборлівы.", M),
    ("be", "Я праводжу вечары дома адна.", F),
    # Fourth round
    ("ru", "Поэтому я рада, что она возвращается в моду.", F),  # pymorphy ranks the noun "рада" first
    ("ru", "Я, естественно, смог бы выйти на сцену.", M),  # "я" before a parenthetical
    ("be", "Яны спыталі мяне, ці спаў я ўжо са сваім партнёрам.", M),  # past form before "я"
    ("be", "Я люблю камандныя віды спорту, таму вельмі сумаваў.", M),  # dropped "я" after a conjunction
    ("be", "Я хоць і мерзла, але аддала дзіцяці сваё паліто.", F),
    ("be", "Яна прыйшла, і таму вельмі сумавала.", N),  # another subject in the sentence
    ("be", "Я ніколі ніводнага са сваіх кліентаў не падводзіў.", M),  # negated past form beyond the window
    ("be", "Я мала зарабіў у гэтым месяцы.", M),  # the adverb "мала" is no feminine past form
    ("be", "Я заўсёды лепшы ва ўсім.", M),
    ("sl", "Vendar sem vesela.", F),  # "vendar" is a conjunction, not a masculine adjective
    ("sl", "Nisem mogla uganiti znamke, vendar sem se v njih počutila čudovito.", F),
    ("sr", "Тако сам срећан што ме чини кривим.", M),  # adjective before a subordinator
    ("sr", "Толико сам опседнут хигијеном да перем јаја.", M),  # adjective before an instrumental noun
    ("hr", "Možda sam previše formalan.", M),  # "možda" is an adverb
    ("sr", "Ja sam dobar ekonomista.", N),  # predicate noun phrase
]


@pytest.mark.parametrize(("lang", "text", "expected"), CASES)
def test_hand_written_cases(lang: str, text: str, expected: str | None) -> None:
    assert first_person_gender(text, lang) == expected


@pytest.mark.parametrize("lang", ["en", "bg", "RU", "", "xx"])
def test_unknown_language_is_a_value_error(lang: str) -> None:
    with pytest.raises(ValueError, match="unsupported language code"):
        first_person_gender("Я была рада.", lang)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("", "ru"),
        ("   ", "pl"),
        ("I was happy.", "ru"),
        ("I was happy.", "cs"),
        ("我很高兴。", "sr"),
        ("12345 ...", "uk"),
    ],
)
def test_empty_or_foreign_text_is_undetected(text: str, lang: str) -> None:
    assert first_person_gender(text, lang) is None


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        first_person_gender(None, "ru")  # type: ignore[arg-type]


def test_malformed_label_file_names_row_and_field(tmp_path) -> None:
    (tmp_path / "ru.tsv").write_text("system\trow\tlabel\ndeepl\t3\tmale\n", encoding="utf-8")
    with pytest.raises(MalformedDataError, match=r"row 2, field 'label'"):
        read_labels("ru", tmp_path)


def test_fixtures_reference_existing_rows() -> None:
    for lang in ("be", "ru", "uk", "pl", "cs", "sk", "hr", "sl", "sr"):
        labels = read_labels(lang)
        assert len(labels) >= 40
        assert {label.system for label in labels} <= {"deepl", "google_translate"}
        for system in {label.system for label in labels}:
            rows = len(load_translations(system, lang))
            assert all(label.row < rows for label in labels if label.system == system)


def test_accuracy_on_hand_labels() -> None:
    results = [measure_accuracy(lang) for lang in ("be", "ru", "uk", "pl", "cs", "sk", "hr", "sl", "sr")]
    total = sum(r.total for r in results)
    correct = sum(r.correct for r in results)
    assert correct / total >= 0.95
    for result in results:
        assert result.share >= 0.95, (result.lang, result.errors)
    # No labelled row gets the wrong gender (as opposed to an undetected one).
    wrong = [(r.lang, e) for r in results for e in r.errors if e[1] is not None]
    assert not wrong, wrong


# Measured yields (DETECTOR.md) minus about one point, or the target where it is reached (be); the targets
# are not all reached, see DETECTOR.md.
YIELD_FLOORS = {
    "be": 0.75,
    "ru": 0.735,
    "uk": 0.745,
    "pl": 0.79,
    "cs": 0.865,
    "sk": 0.87,
    "hr": 0.825,
    "sl": 0.81,
    "sr": 0.82,
}


@pytest.mark.parametrize("lang", sorted(YIELD_FLOORS))
def test_yield_on_deepl_and_google_outputs(lang: str) -> None:
    systems = [s for s in ("deepl", "google_translate") if available(s, lang)]
    assert systems
    for system in systems:
        result = measure_yield(system, lang)
        assert result.total > 3000
        assert result.share >= YIELD_FLOORS[lang], (system, result.share)
        assert 0 < result.feminine < result.detected
