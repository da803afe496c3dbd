"""The upstream sources of EuroGEST (JacquelineRowe/EuroGEST): the released dataset and the evaluation configs.

The data files were removed from the repository after 10cd775 (now on the Hugging Face hub, unreachable here); at that
commit their non-empty cells per language equal the paper's statistics file. The evaluation code and its configs
(scaffolds, quotation marks, pronoun languages, stereotype labels, languages) are read at b543592, with the English
GEST 1.1 sentences the translations were made from (byte-identical to kinit-sk/gest's ``data/gest_1.1.csv``).
"""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

CITATION = (
    "Rowe, Klimaszewski, Guillou, Vallor, Birch (2025). EuroGEST: Investigating gender stereotypes in multilingual "
    "language models. EMNLP 2025."
)

EUROGEST = Source(
    name="eurogest",
    repo="JacquelineRowe/EuroGEST",
    commit="10cd77596b0700a3c3c169c2facec5a21fa7c444",
    licence="Apache-2.0",
    citation=CITATION,
    files=parse_pins(
        """
    e6f7b9a5c2f954c21ac34fce824d55d190fa6ceac69c809455e0d0f2905aa8b4    4139714  data/gest_translations_gender_insensitive.csv
    d9e442f10c37f83e59cde71231f5349f5df72313bbc0450bf98a0bbda21dd9d0    2366306  data/gest_translations_gender_sensitive.csv
    eff94f055fedddeed2cf7da67d965ed65a23819f5ca1e224a705934db1c2c90c        556  data/language_statistics.csv
"""
    ),
)

EUROGEST_EVAL = Source(
    name="eurogest-eval",
    repo="JacquelineRowe/EuroGEST",
    commit="b54359247d6a0cfab3247cc02be152e809004cbe",
    licence="Apache-2.0",
    citation=CITATION,
    files=parse_pins(
        """
    51d14d5dc648d5be867d40bd312c016471c485827f6c28488c7234b9d30fcd9c     218585  create_dataset/gest_1.1.csv
    d64e47a726befe3f63a80adcfa058597e5d1961a025a600913e65462e883410f        475  evaluate_models/configs/language_test_configs.json
    e6f22133fca8dd2266200774bb63777d94f4327ac1c55d43ce7a852a7102c238       4185  evaluate_models/configs/prompt_scaffolds.json
    3bc2b99107a8113a03eb53355b9a3bd5061b7965a2f7c0038c19a168d09b3769       1594  evaluate_models/configs/punc_map.json
    793e01018d90e6b6ad5ada90d09b13eb513fbdc4654ae24b2141c3f635fbf62e        290  evaluate_models/configs/stereotype_labels.json
    8a04dac42f8cec775aec20c6747bbd69a56ceba00ae3411df6631e06d2cf0af4        639  evaluate_models/configs/supported_languages.json
"""
    ),
)
