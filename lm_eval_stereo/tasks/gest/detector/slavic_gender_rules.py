"""Hand-written word lists and suffix rules of the Slavic first-person gender detector.

These are the project's own linguistic rules (no upstream data): which words mark a first-person-singular
clause in each language, which words are skipped when looking for the form that agrees with "I", and the
endings of masculine / feminine l-participles and predicative adjectives. Words are lower-case; Serbian
Cyrillic is transliterated to Latin before these rules are applied, so the Serbian lists are in Latin script.
"""

from __future__ import annotations

import re

MASCULINE = "masculine"
FEMININE = "feminine"

EAST = ("be", "ru", "uk")
WEST_SOUTH = ("pl", "cs", "sk", "hr", "sl", "sr")
LANGUAGES = EAST + WEST_SOUTH

# ---------------------------------------------------------------------------------------------------------------
# East Slavic: the subject pronoun "я" anchors a clause; other nominative pronouns and subordinators end the scan.
EAST_SUBJECT = "я"
EAST_STOP = frozenset(
    # ru
    "он она оно мы вы ты они что чтобы который которая которое которые когда если потому где пока хотя "
    # uk
    "він вона воно ми ви ти вони що щоб який яка яке які коли якщо бо поки хоча "
    # be
    "ён яна яно мы вы ты яны што каб які якая якое якія калі бо пакуль хоць".split()
)
# Personal pronouns that name another nominative subject (blocks the pro-drop fallback in ru/uk).
# "that" opening a complement clause whose dropped subject is the "я" of the clause before.
EAST_THAT = frozenset(("что",))  # Ukrainian "що" is also a relative pronoun ("собаку, що тонула")
# "to be" and the oblique "me" forms of the infinitive-predicate rule ("Мне было важно быть красивой").
EAST_TO_BE = frozenset("быть бути быць".split())
EAST_ME = frozenset("мне меня мені мене мяне".split())
# Words after which an adjective is predicative instrumental ("чувствую себя удовлетворенной", "быть вежливой").
EAST_LINK = frozenset("себя собой себе собою быть бути стать стати такой такою".split())
# Longest clause after "я," read as a parenthetical and skipped ("я, натуральна, змог бы").
EAST_PARENTHETICAL = 2
EAST_OTHER_SUBJECTS = frozenset("он она оно мы вы ты они він вона воно ми ви ти вони".split())

# Belarusian (no morphological dictionary on PyPI): suffix rules on the words that follow "я".
BE_SKIP = frozenset(
    "надзвычай дастаткова крыху трохі занадта "
    "не ніколі заўсёды таксама вельмі часта ўжо ужо яшчэ проста сапраўды нават толькі зноў амаль адразу ледзь "
    "раней калісьці потым сёння учора ўчора нарэшце ўвесь увесь час таму так надта занадта моцна хутка найбольш "
    "больш менш зусім цалкам мала нашмат настолькі "
    "сам сама самы самая і ж жа ўсё усё б бы".split()
)
BE_NOT_PARTICIPLE = frozenset(
    "сіла школа мыла правіла галава справа права вада дзела цела крыла сяла пчала стала хвала зала сала ула ".split()
)
BE_FEM_PAST = re.compile(r"[\w']{2,}(ла|лася|лась)")
BE_MASC_PAST = re.compile(
    r"[\w']+[аеіоуыэюяё]ў(ся)?|[\w']*(мог|нёс|нес|вёз|пёк|лёг|мёр|стрыг|ёк|ек|ок)(ся)?|[\w']+(бег|бёг)(ся)?"
)
# Past-tense endings that nouns do not share, read beyond BE_WINDOW.
BE_VERB_PAST = re.compile(r"[\w']{2,}(іў|ыў|уў|эў|еў|іла|ыла|ула|ела)(ся|ася)?")
BE_MASC_ADJ = re.compile(r"\w{3,}(ы|і|ым|ім)$")
BE_FEM_ADJ = re.compile(r"\w{3,}(ая|яя|ай|яй)$")
BE_SHORT = {
    "павінен": MASCULINE,
    "павінна": FEMININE,
    "рады": MASCULINE,
    "рада": FEMININE,
    "сам": MASCULINE,
    "адзін": MASCULINE,
    "адна": FEMININE,
}
# Belarusian words in -ы/-і/-ай that are not adjectives agreeing with "I" (verbs, adverbs, nouns).
BE_NOT_ADJ = frozenset("мы вы ты яны ці калі толькі вельмі заўсёды сабе мне мяне дзеці людзі рукі".split())
# Words that may follow a predicative adjective (prepositions, conjunctions); any other word is taken as its noun.
BE_AFTER_PREDICATIVE = frozenset(
    "і й а але ў у ва ад да з са на па за пры для праз пра перад пасля без сярод каб што калі бо чым як "
    # oblique pronouns cannot be the adjective's noun ("я здольны яго ўдарыць", "Я адданы сваёй кампаніі")
    "яго яе іх гэта сваёй свайму сваім маёй майму маім".split()
)
# Forms after which a Belarusian adjective is predicative ("быў шчаслівы", "адчуваю сябе моцнай").
BE_LINK = frozenset("быць быў была стаць стаў стала застаўся засталася сябе".split())
BE_WINDOW = 3  # the agreeing form must be among the first content words after "я"
# Belarusian pro-drop: a sentence that opens with a first-person past form ("Збіраўся купіць ...") and has no
# "я" clause. Forms of "быць" are left out ("Была ноч" has a subject after it).
BE_NOT_PRO_DROP = frozenset("быў была было былі стаў стала".split())
BE_IMPERSONAL = frozenset("мне мяне табе яму ёй нам вам ім".split())
# Conjunctions that open a later clause whose dropped subject is the "я" of an earlier clause ("..., таму вельмі сумаваў").
BE_PRO_DROP_CONJ = frozenset("і а але таму дык потым".split())
BE_OTHER_SUBJECTS = frozenset("ён яна яно мы вы ты яны хтосьці нехта ніхто".split())

# ---------------------------------------------------------------------------------------------------------------
# West and South Slavic: anchors are first-person-singular auxiliaries / pronouns; the gendered form is the
# nearest l-participle or predicative adjective in the same clause.
ANCHORS = {
    "pl": frozenset("ja jestem będę".split()),
    "cs": frozenset("jsem nejsem bych abych kdybych já cítím necítím budu nebudu".split()),
    "sk": frozenset("som ja cítim necítim budem nebudem".split()),
    "hr": frozenset("sam nisam jesam bih ja ću neću mogu moram želim osjećam budem postanem postajem ostanem".split()),
    "sr": frozenset("sam nisam jesam bih ja ću neću mogu moram želim osećam budem postanem postajem ostanem".split()),
    "sl": frozenset("sem nisem bom jaz počutim postanem ostanem".split()),
}

# Words skipped between an anchor and the form that agrees with it (adverbs, particles, clitics).
SKIP = {
    "pl": frozenset(
        "nie bardzo zawsze naprawdę też także tak zbyt dość często już wciąż ciągle całkowicie trochę po prostu "
        "tylko jeszcze teraz wtedy zupełnie strasznie niesamowicie niezwykle mega dosyć raczej się sobie być".split()
    ),
    "cs": frozenset(
        "se si ne to tak velmi moc vždy vždycky nikdy ještě už jen jenom opravdu taky také i hodně trochu dost "
        "příliš docela úplně stále pořád často teď pak tehdy mu mi ho ji je jim jí mě mne tě ti ".split()
    ),
    "sk": frozenset(
        "sa si nie to tak veľmi vždy nikdy ešte už len naozaj tiež aj veľa trochu dosť príliš celkom úplne stále "
        "často teraz potom vtedy mu mi ho ju ich im jej ma mňa ťa ti by".split()
    ),
    "hr": frozenset(
        "se si ne to tako vrlo veoma prilično malo biti jako uvijek nikad nikada još već samo stvarno zaista također i baš previše dosta "
        "prilično potpuno stalno često sada tada onda mu mi ga ju je ih im joj me te ti da".split()
    ),
    "sl": frozenset(
        "se si ne to tako zelo vedno nikoli še že le samo res resnično tudi in preveč dovolj precej popolnoma "
        "stalno pogosto zdaj nato takrat mu mi ga jo jih jim ji me te ti".split()
    ),
}
SKIP["hr"] |= frozenset("dovoljno premalo ikada nikada nekada ponekad uvijek li više nam vam".split())
SKIP["sl"] |= frozenset("kdaj kdajkoli kadarkoli nekoč bolj najbolj več včasih ponavadi nam vam videti".split())
SKIP["cs"] |= frozenset("nám vám někdy mnohem ani".split())
SKIP["sk"] |= frozenset("nám vám niekedy oveľa omnoho zďaleka ani".split())
SKIP["sr"] = SKIP["hr"] | frozenset("veoma uvek takođe sad".split())
SKIP["pl"] |= frozenset("wystarczająco wcale nigdy taki taka".split())

# Conjunctions that start another clause: the search for the form agreeing with "I" stops there.
CLAUSE_BREAK = {
    "pl": frozenset("i a ale że gdy kiedy bo ponieważ aby żeby niż jak który która które".split()),
    "cs": frozenset("a ale že když protože než jako který která které kteří".split()),
    "sk": frozenset("a ale že keď pretože než ako ktorý ktorá ktoré ktorí".split()),
    "hr": frozenset("a ali da kad kada jer nego kao koji koja koje dok".split()),
    "sl": frozenset("in a ali da ko ker kot ki kateri katera".split()),
}
# Interrogative and relative words and "if / although" open a subordinate clause as well.
CLAUSE_BREAK["cs"] |= frozenset("co kdo jak kde proč pokud jestli".split())
CLAUSE_BREAK["sk"] |= frozenset("čo kto kde prečo ak".split())
CLAUSE_BREAK["hr"] |= frozenset("što šta tko ko kako gdje gde zašto ako iako".split())
CLAUSE_BREAK["sr"] = CLAUSE_BREAK["hr"]

# Words after which a predicative adjective may end (anything else after it is taken to be its noun).
AFTER_PREDICATIVE = {
    "pl": frozenset("i a ale że gdy kiedy bo ponieważ aby żeby niż jak w we na do z ze od po przy dla za o u".split()),
    "cs": frozenset("a i ale že když protože aby než jako vůči v ve na do s se z ze k ke o po pro za při od u".split()),
    "sk": frozenset("a i ale že keď pretože aby než ako voči v vo na do s so z zo k ku o po pre za pri od u".split()),
    "hr": frozenset("i a ali da kad kada jer nego kao u na do s sa iz od po za o pri prema koji koja".split()),
    "sl": frozenset("in a ali da ko ker kot ki v na do s z iz od po za o pri".split()),
}
# A reflexive clitic right after an adjective ends its phrase ("Najsrečnejša se počutim").
for _lang in ("cs", "sk", "hr", "sl"):
    AFTER_PREDICATIVE[_lang] |= frozenset(("se", "si"))
AFTER_PREDICATIVE["sr"] = AFTER_PREDICATIVE["hr"]

# hr/sr: an instrumental noun after a nominative adjective cannot be its head ("opsednut higijenom", "okružen
# prijateljima"), so the adjective is predicative.
INSTRUMENTAL = {"hr": re.compile(r"\w{3,}(om|ima)"), "sr": re.compile(r"\w{3,}(om|ima)")}

# Prepositions: an adjective after one belongs to its noun phrase ("sam bez vidljivog razloga"), except after a
# short pronoun object ("jsem za to vděčný", "som do toho zamilovaný").
PREPOSITIONS = {
    "pl": frozenset("w we na do z ze od po przy dla za o u bez przez przed nad pod".split()),
    "cs": frozenset("v ve na do s se z ze k ke o po pro za při od u bez přes před nad pod mezi kvůli".split()),
    "sk": frozenset("v vo na do s so z zo k ku o po pre za pri od u bez cez pred nad pod medzi kvôli".split()),
    "hr": frozenset(
        "u na do s sa iz od po za o pri prema bez zbog kod kroz pred nad pod među posle poslije nakon".split()
    ),
    "sl": frozenset("v na do s z iz od po za o pri brez zaradi pred nad pod med skozi".split()),
}
PREPOSITIONS["sr"] = PREPOSITIONS["hr"]
for _lang, _prepositions in PREPOSITIONS.items():
    AFTER_PREDICATIVE[_lang] |= _prepositions
# "or" joins two predicative adjectives ("sam tužan ili ljut"); "jesi/jeste" open an indirect question.
for _lang, _words in {"pl": "lub albo", "cs": "nebo", "sk": "alebo", "hr": "ili jesi jeste jesu", "sl": "ali"}.items():
    AFTER_PREDICATIVE[_lang] |= frozenset(_words.split())
# Dative / instrumental pronouns cannot belong to a nominative adjective's noun ("Ja sam važan svojoj porodici").
AFTER_PREDICATIVE["hr"] |= frozenset(
    "svojoj mojoj svom svome svojim svojima mojim mojima njoj njemu njima meni tebi sebi".split()
)
AFTER_PREDICATIVE["sl"] |= frozenset("svoji moji svojemu mojemu svojim mojim njej njemu njim meni tebi sebi".split())
AFTER_PREDICATIVE["sr"] = AFTER_PREDICATIVE["hr"]
# Adverbs formed from adjectives (they may stand between an anchor and a predicative adjective).
ADVERB = {
    "pl": re.compile(r"\w{3,}(o|ie)"),
    "cs": re.compile(r"\w{3,}(ě|e|o|sky|cky|ky)"),
    "sk": re.compile(r"\w{3,}(o|e|sky|cky)"),
    "hr": re.compile(r"\w{3,}(o|ski|čki|ćki)"),
    "sl": re.compile(r"\w{3,}(o|sko|ški)"),
}
ADVERB["sr"] = ADVERB["hr"]
# "such" and "the only" before a predicative adjective (they agree with it, so they never mislead).
INTENSIFIERS = frozenset(
    "taký taká takový taková taki taka takav takva jediný jediná jedini jedina edini edina jedyny jedyna".split()
)
PRONOUN_OBJECTS = frozenset(
    "to toho tom tomu tomto tomhle toga tome tem tega tej nich nim ně něj nej nju njih njim njega nje sebe sebi "
    "mne mně mnie tebe teba ciebie".split()
)

# l-participles: (masculine pattern, feminine pattern) on the whole word.
PARTICIPLE = {
    "cs": (
        re.compile(
            r"\w+[aeiouyáéěíůý]l|\w+[bcčdďfghkmnňprřsštťvzž]l|\w*(mohl|řekl|nesl|četl|vezl|pekl|tekl|vlekl|lehl|sedl|padl|kradl|vedl|jedl|bodl|klekl|tiskl|zhasl|rostl|kvetl|střihl|zdvihl|dosáhl|táhl|mohl|zamkl|nechtěl)"
        ),
        re.compile(r"\w+la"),
    ),
    "sk": (
        re.compile(
            r"\w+[aeiouyáéíóúýäô]l|\w*(mohol|povedal|išiel|šiel|prišiel|odišiel|zišiel|vošiel|našiel|ušiel|rástol|niesol|viezol|piekol|utiekol|ľahol|sadol|padol|vládol)"
        ),
        re.compile(r"\w+la"),
    ),
    "hr": (re.compile(r"\w+(ao|io|eo|uo|mro)"), re.compile(r"\w+la")),
    "sl": (
        re.compile(
            r"\w+[aeiour]l|\w*(mogel|rekel|šel|pekel|tekel|vlekel|legel|sedel|padel|kradel|vedel|jedel|nesel|vozil|rastel|cvetel|strigel|dvignil|umrl|začel|vzel|gnal)"
        ),
        re.compile(r"\w+la"),
    ),
}
PARTICIPLE["sr"] = PARTICIPLE["hr"]
PARTICIPLE["pl"] = (re.compile(r"\w+ł"), re.compile(r"\w+ła"))  # after "będę" ("będę robiła")

# Predicative adjectives and passive participles: (masculine pattern, feminine pattern).
ADJECTIVE = {
    "pl": (
        re.compile(r"\w{3,}[^aeiouyąęó]y|\w{3,}[kg]i|\w{3,}ony|\w{3,}ty|\w*sam|pewien|winien|gotów|rad"),
        re.compile(r"\w{3,}[^aeiouyąęó]a|\w*sama"),
    ),
    "cs": (
        re.compile(r"\w{2,}ý|\w{3,}(en|án|át|it)|rád|sám"),
        re.compile(r"\w{2,}á|\w{3,}(ena|ána|ata|ita)|ráda|sama"),
    ),
    # Slovak rhythmic law: short -y/-a only after a long syllable ("krásny", "vážna"), else -ý/-á.
    "sk": (
        re.compile(r"\w+ý|\w*([áéíóúýô]|i[aeu])[^aeiouyáéíóúýäô]+y|\w{2,}í|rád|sám"),
        re.compile(r"\w+á|\w*([áéíóúýô]|i[aeu])[^aeiouyáéíóúýäô]+a|\w{2,}ia|rada|sama"),
    ),
    "hr": (
        re.compile(
            r"\w{2,}(an|en|ak|av|ar|at|iv|ad|ab|ag|ol|uk|ok|ut|ov|ljen|njen|jen|ran|ven|ust|ast|ist|ao)|\w{3,}[^aeiou]i|sam|jak|mlad|star|gol|zao|sit|žedan|bos|živ|zdrav|sretan|ljut"
            r"|grub|glup|strog|lijep|lep|slab|brz|tih|lud|gord|drag|nag|tup|krut"
        ),
        re.compile(r"(?!\w*(ima|ama|oma|ega)$)\w{2,}[^aeiou]a|\w{2,}ija|sama"),
    ),
    "sl": (
        re.compile(
            r"\w{2,}(an|en|ak|av|ar|at|iv|ad|ab|ag|ol|uk|ok|ut|ov|jen|ran|ven|ust|ast|ist|el|er)|\w{3,}[^aeiou]i|sam|živ|zdrav|vesel|sit|lačen|žejen"
            r"|strog|slab|lep|grd|tih|hud|nor|drag|bos|gol|mlad|star"
        ),
        re.compile(r"(?!\w*(ima|ama|oma|ega)$)\w{2,}[^aeiou]a|\w{2,}ija|sama"),
    ),
}
ADJECTIVE["sr"] = ADJECTIVE["hr"]

# Words the patterns above would take for participles or adjectives but which are not (nouns, adverbs, ...).
NOT_GENDERED = {
    "pl": frozenset(
        "materiałem kapitałem ideałem udziałem działem zapałem upałem szałem generałem kanałem sygnałem zespołem "
        "kościołem stołem aniołem popiołem kotłem orłem węzłem pomysłem zmysłem przemysłem hasłem masłem krzesłem "
        "wiosłem rzemiosłem czołem kołem pudłem źródłem światłem ciałem mydłem sidłem dołem mułem wołem celem "
        "szkoła siła praca sprawa prawda woda strona droga głowa ręka noga dziewczyna kobieta matka osoba żona "
        "mama córka siostra babcia przyjaciółka koleżanka każdy wszyscy inny inni taki tacy który która "
        "cały dobry mój twój swój nasz samy".split()
    ),
    "cs": frozenset(
        "cíl styl hotel model učitel přítel obyvatel ředitel spisovatel zaměstnavatel rodič anděl kostel stůl sůl "
        "profil detail festival fotbal signál materiál potenciál ideál kapitál personál seriál mobil automobil dál "
        "smysl mysl úmysl průmysl nesmysl škola síla vila hala skála jídla čísla pravidla světla křídla kola sedla zrcadla křesla divadla letadla "
        "těla díla másla řemesla čela pekla mýdla žena cena změna scéna strana rodina hodina práce "
        "kamarádka přítelkyně matka máma dcera sestra babička osoba paní dívka holka manželka".split()
    ),
    "sk": frozenset(
        "cieľ štýl hotel model učiteľ priateľ obyvateľ riaditeľ spisovateľ zamestnávateľ anjel kostol stôl soľ "
        "profil detail festival futbal signál materiál potenciál ideál kapitál personál seriál mobil "
        "škola sila vila hala skala jedla čísla pravidla svetla krídla kola sedla zrkadla kresla divadla "
        "lietadla tela diela masla remesla čela pekla mydla žena cena zmena scéna strana rodina hodina práca "
        "kamarátka priateľka matka mama dcéra sestra babka osoba pani dievča manželka povedala povedal "
        "ja ty on ona my vy oni som sa si na za pa ta tá tí táto tento toto tieto ktorý ktorá ktoré ktorí "
        "každý každá žiadny žiadna nikto niekto nič niečo moja môj tvoja tvoj svoja svoj naša náš "
        "veľmi vždy tiež preto teda práve takže potreba hlava ruka noha voda cesta otázka úloha doba chyba "
        "niekoho nikoho kto čo".split()
    ),
    "hr": frozenset(
        "kao zao posao pakao kotao orao ugao dio deo ceo pepeo čelo "
        "djela tijela jela sela pravila škola pčela strijela bijela cijela cela bela dela tela sila vila "
        "žena osoba majka mama kći sestra baka djevojka cura supruga prijateljica kolegica vođa vodja "
        "ja ti on ona mi vi oni sam si je smo ste su nisam bih bi da na za pa ta tu ova taj ovaj koji koja koje "
        "svaki svaka nitko netko ništa nešto moja moj tvoja tvoj svoja svoj naša naš uvijek također zato "
        "stvar ruka noga voda cesta glava vrata pitanja zadatak posla rada novca vremena nikoga nekoga "
        "moglo bilo toga ovoga onoga".split()
    ),
    "sl": frozenset(
        "cilj stil model učitelj prijatelj prebivalec ravnatelj pisatelj delodajalec angel kostel stol sol "
        "šola sila vila hiša žena oseba mati mama hči sestra babica dekle punca žena prijateljica kolegica "
        "jaz ti on ona mi vi oni sem si je smo ste so nisem bom bi da na za pa ta tu ta to ki kateri katera vodja "
        "vsak vsaka nihče nekdo nič nekaj moja moj tvoja tvoj svoja svoj naša naš vedno tudi zato "
        "stvar roka noga voda cesta glava vrata dela telo tla pravila".split()
    ),
}
# Slovene question words and "if / although" (not clause breaks: the "bi" rule needs them before "bi").
NOT_GENDERED["sl"] |= frozenset("kaj kdo kako kje zakaj če čeprav".split())
# Clause-initial words before "sem/sam" that the adjective patterns would read ("Vendar sem vesela", "Jedva sam"):
# conjunctions, adverbs and fronted accusative/genitive nouns.
NOT_GENDERED["sl"] |= frozenset(
    "vendar ampak sicer preden dokler kjer kadar odkar kamorkoli seveda menda morda sprva sinoči ponoči pozimi "
    "enkrat naenkrat večkrat zlahka pravkar domov ničesar česar nekoga pridi denar obrok izzivov partnerja sina "
    "dekleta okna veterinarja pohoda polena madeža izvajalca prijatelja nečaka kužka mačka sosedi".split()
)
NOT_GENDERED["hr"] |= frozenset(
    "jedva možda valjda ipak odmalena pokazat financijski finansijski psihički fizički dubinski".split()
)
NOT_GENDERED["sr"] = NOT_GENDERED["hr"]
NOT_GENDERED["pl"] |= frozenset("stół kościół anioł orzeł węzeł popiół kozioł osioł".split())

# Modal l-participles that are often impersonal ("trebala mi je pomoć"): read only right next to the anchor
# ("Trebao bih", "sam trebala").
ADJACENT_ONLY = {"hr": frozenset("trebao trebala morala".split())}
ADJACENT_ONLY["sr"] = ADJACENT_ONLY["hr"]

# Infinitives: never an adjective, and may follow a predicative adjective ("gotów pomóc", "spreman pomoći").
INFINITIVE = {
    "pl": re.compile(r"\w{2,}(ć|c)"),
    "cs": re.compile(r"\w{2,}(t|ct)"),
    "sk": re.compile(r"\w{2,}ť"),
    "hr": re.compile(r"\w{2,}(ti|ći)"),
    "sl": re.compile(r"\w{2,}ti"),
}
INFINITIVE["sr"] = INFINITIVE["hr"]
BE_INFINITIVE = re.compile(r"[\w']{2,}(ць|ці|чы)")

# Slovene conditional "bi" is the same for every person ("jaz/ti/on bi šel"). A "bi" + l-participle clause is read
# as first person only when nothing but these words precede "bi" in its clause (no subject there), the sentence
# has a first-person form (SL_FIRST_PERSON) and no second- or third-person pronoun or verb (SL_OTHER_PERSON).
SL_CONDITIONAL = "bi"
SL_BEFORE_BI = frozenset(
    "ne se si mi me ga jo to tega tem o nikoli lahko še tudi res zares raje tako vse nič pa potem zato "
    "kdaj morda mogoče vsekakor sam sama rad rada nerad nerada če čeprav".split()
)
SL_FIRST_PERSON = re.compile(
    r"jaz|mene|meni|me|mi|moj\w*|sem|nisem|bom|(?!svoj|tvoj|naš|vaš|njen|njeg|vs|kater|tak|kak|drug|nek)\w{2,}(am|em|im)"
)
SL_OTHER_PERSON = frozenset(
    "ti ona on ono oni one vi ste je so sta bodo bo bili bile ni niso nista nekdo kdo nihče mu jim njen njegov "
    "njim njem tem čem kom nekom".split()
)

# cs/sk "rád/ráda" + a first-person present verb ("Ráda chodím", "Rád bojuji"): gender without an auxiliary.
GLAD = {
    "cs": {"rád": MASCULINE, "ráda": FEMININE, "nerad": MASCULINE, "nerada": FEMININE},
    "sk": {"rád": MASCULINE, "rada": FEMININE, "nerád": MASCULINE, "nerada": FEMININE},
    "sl": {"rad": MASCULINE, "rada": FEMININE, "nerad": MASCULINE, "nerada": FEMININE},
}
PRESENT_1SG = {
    "cs": re.compile(r"\w+(ám|ím|ém|uji|uju)|chci|nechci|můžu|nemůžu|mohu|jdu|budu|nebudu"),
    "sk": re.compile(r"\w+(ám|ím|em|iem)"),
    "sl": re.compile(r"\w+(am|em|im)"),
    "hr": re.compile(r"\w+(am|em|im)|mogu|hoću"),
}
PRESENT_1SG["sr"] = PRESENT_1SG["hr"]
# "to be" after a first-person present verb anchors a predicative adjective ("Volim biti glavni", "Chci být silná").
TO_BE = {"cs": "být", "sk": "byť", "hr": "biti", "sr": "biti", "sl": "biti"}
# Instrumental / locative pronouns and adjectives in -m that the 1sg patterns above would take for verbs.
NOT_VERB_1SG = frozenset(
    "sam nam vam im jim njim njem tim tem čim čem kim kom kojim svim vsem ovim onim nekim mojim svojim tvojim "
    "ním něm tím čím kterým svým mým všem ktorým svojím mojím".split()
)

# Polish first-person past / conditional forms carry person and gender in the ending itself.
PL_SELF_MARKED = (
    (re.compile(r"\w+(łem|łbym)|powinienem"), MASCULINE),
    (re.compile(r"\w+(łam|łabym)|powinnam"), FEMININE),
)
# Polish conditional person markers: "gdybym wiedział", "żebym poszła", "nigdy bym nie poszedł".
PL_CONDITIONAL = frozenset("bym gdybym żebym abym jakbym jeślibym".split())
# Polish forms that introduce a predicative adjective agreeing with "I".
PL_COPULA = frozenset(
    "jestem będę byłem byłam zostałem zostałam stałem stałam czuję czułem czułam chcę muszę mogę wolę".split()
)

# Serbian Cyrillic → Latin (Gaj's alphabet), letter by letter.
SR_CYRILLIC = dict(
    zip(
        "абвгдђежзијклљмнњопрстћуфхцчџш",
        [
            "a",
            "b",
            "v",
            "g",
            "d",
            "đ",
            "e",
            "ž",
            "z",
            "i",
            "j",
            "k",
            "l",
            "lj",
            "m",
            "n",
            "nj",
            "o",
            "p",
            "r",
            "s",
            "t",
            "ć",
            "u",
            "f",
            "h",
            "c",
            "č",
            "dž",
            "š",
        ],
        strict=True,
    )
)
