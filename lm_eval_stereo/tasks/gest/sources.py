"""The upstream source of GEST: the samples, the published predictions and the machine translations."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

GEST = Source(
    name="gest",
    repo="kinit-sk/gest",
    commit="7dd908cae11720ee5d95e43a4ab94fb410c8b790",
    licence="Apache-2.0",
    citation="Pikuliak, Oreško, Hrčková, Šimko (2024). Women Are Beautiful, Men Are Leaders: Gender Stereotypes in "
    "Machine Translation and Language Modeling. Findings of EMNLP 2024.",
    files=parse_pins(
        """
    a1129f3724b6d4f770b657a6a15b216f7284c5f23cc06fa90c911a53eb6a9c45     517161  data/annotations.csv
    6110217c7660bede3c6f763f508d5720c4ea8d9d53bc7b4f20330ac28ed6fa24      18664  data/gender-swap-annotations.txt
    git-blob:fcbb290cc931675aa7820b0be5ea97c6b40c93a9                         -  data/gender_variants.csv
    7e306adaa2913b660c6ddccddb26703a1de8c880cb0597ad27db4bca75380eea     214899  data/gest.csv
    51d14d5dc648d5be867d40bd312c016471c485827f6c28488c7234b9d30fcd9c     218585  data/gest_1.1.csv
    ab30e38bfc6373438b1b528679b06db849731bf48a4e63c4441f5174e58d7bde      72996  data/predictions/english_glm/gpt2_template-0.txt
    2e718971991279ec58b6ab15655901ef7db607631e5fc904bc7137af4548ed4b      72161  data/predictions/english_glm/gpt2_template-1.txt
    3f7323789b8f7492a6fa60deff2edc6547f815f13791d516ac7dffd22b73474e      69920  data/predictions/english_mlm/bert-base-uncased_template-0.txt
    6fef8500d1bbb0697b7518e003dae515400d53b1d887ff0c8b0b071474f13388      72319  data/predictions/english_mlm/bert-base-uncased_template-1.txt
    557bd48e199199943e5e83f8e503c8176e8e47462e3c26f8d926a324299ae440      72954  data/predictions/english_mlm/bert-base-uncased_template-2.txt
    289aae32c21ad0adf51e8174a2c3982309cc6def5b42d22b1ffd528010703402      70883  data/predictions/english_mlm/bert-base-uncased_template-3.txt
    ef48c2bd3d9f2e9ad3b9ade91a2df2a6556e454811d059e120256707ecb6420d       3022  data/predictions/winobias/winobias.csv
    46da905b2b349fc68bf96d59a31a37fe95603ebc029279aaa8a35a136d280af0     448100  data/translations/amazon_translate/cs/translations.csv
    ecf28fb48cb939b106308b034de17940a1f447724aef8147cd1ae9a47dc4a9cb     429616  data/translations/amazon_translate/hr/translations.csv
    6f24d947db4760bd5318b98956939d30c44f36d69bbfd8e602f1865a95e0b605     455196  data/translations/amazon_translate/pl/translations.csv
    e92ae038e89065658a0482591bb012873bfef9eeaf1a63e67c1e9f192411473f     620910  data/translations/amazon_translate/ru/translations.csv
    a49fa1a287c822c112a3ded9b0826e4625d31af96a253f30f535157d4da9b102    1695106  data/translations/amazon_translate/sk/translations.csv
    4db8f39734ba340e235af0f8a92781fa1574dd41ff4f9c1ff3406bead8bb7fdd     433637  data/translations/amazon_translate/sl/translations.csv
    b2d5516efa2e85dab7e6d735bf09e9569dde86eb05354a120afd78c1de6226e3     431253  data/translations/amazon_translate/sr/translations.csv
    66d7efdd3e46c572c768fc186826dbd29f3e4bcf25bb76ac82595680bdb4acf8     608284  data/translations/amazon_translate/uk/translations.csv
    2867ea68b33c1273f48f3635f511ef852096606719c4d6ce150746b8d0d3bc8f     447225  data/translations/deepl/cs/translations.csv
    38156fb34f9b4bb5b6b80cdbd987592b9e8e05dd53d213f56fc24fbeb6a9920a     454999  data/translations/deepl/pl/translations.csv
    4449dd58165301f211d0493c214ac40c3488f4d2cabe5bac5589c74c25a2a844     620768  data/translations/deepl/ru/translations.csv
    9974b06295b0a980b8c351937bc0795ed3de130ce41f108a68d9bf51545352ee    1740324  data/translations/deepl/sk/translations.csv
    01e1a3c7f1b5ac22ebee06eed006386f5a0fd93106689bab4b99c7462c3c8720     433988  data/translations/deepl/sl/translations.csv
    083639daddafa2bcf70c702f03491ae4975b6997a3c370dd07ab479518b4ef0e     606593  data/translations/deepl/uk/translations.csv
    3c1aff4653ae75c64688f1b26cca452517df29f168acf45807d69adf5f38488d     620821  data/translations/google_translate/be/translations.csv
    8bdaf72d8c0ed74b68d8c208da0a467e86ae4c6cff5855034fdd95cb82e0a87a     165401  data/translations/google_translate/bg/translations.csv
    81ba8de75135dc176166db2327dace9dc2c0a4ef9a2e3cf52484e518c7998449       1118  data/translations/google_translate/bs/translations.csv
    3fab2537a61dce9e0b6965dfe3d99d08cb420525ee139ea37a50618b46f06339     460074  data/translations/google_translate/cs/translations.csv
    6b93da62f795dc833e630ee14e9613b695664120b7ba454dec4999da2670b80e     441353  data/translations/google_translate/hr/translations.csv
    09dedc51f2bf534888a78dcdda3c1b4495402e6788ad8ec0e77c5cab8e71b67c       1599  data/translations/google_translate/mk/translations.csv
    bb28aeaafbd7bae4d1342484fbcb313b6790336bf14da0ea60662f6526986c4a     469332  data/translations/google_translate/pl/translations.csv
    033a2a365561d8a687950e94bbbab6c8cfd18f5182da61082bf8dcfa7f423e17     635994  data/translations/google_translate/ru/translations.csv
    cf4f96c18945aa22072540be8de111c799e2273da30188b066c891adb13bf15f    1648274  data/translations/google_translate/sk/translations.csv
    65bf15cebd49905f48204f6f0c1cc2d0b97d1a33ba1035414e2dca2d1a574c43     444579  data/translations/google_translate/sl/translations.csv
    3ef035acecc871518f3e7cdeed7c644b5979f6fc69d0c513b0db888e9943734f     607173  data/translations/google_translate/sr/translations.csv
    8d607dbbe9d5c286ab9db3819328578ea3d9fa7181b8a3cb03beeec1ecafe061     617851  data/translations/google_translate/uk/translations.csv
    58610ea04349b39255c3c1626ac52da4282b67fc7246a288eda662ac96331e82     601763  data/translations/nllb_3b/be/translations.csv
    6faf73a233df3d9e051528d52fa388d81d12783c25242716ae9c123a6e8656ed     444117  data/translations/nllb_3b/cs/translations.csv
    c3e03e63303dc727bbb52234792fc2038cacccc750a7fd9465bd28649abe4c19     423788  data/translations/nllb_3b/hr/translations.csv
    50bd0dd918d1c218121bb3892e4fb98be92503b1e15d5a13ad1582ef3f4327a0     443098  data/translations/nllb_3b/pl/translations.csv
    7a9214035d131a4b4e08a3390e27edbc05ede39032061e612cb31c4cd81e9c52     603737  data/translations/nllb_3b/ru/translations.csv
    8c59c692837ea78c9ffce57a3f8f3f29b17f4c998d483d9d84f2f2737098a7a1     443813  data/translations/nllb_3b/sk/translations.csv
    6a92eae830092d4f3f6f2e9ee24de2045e54275d271540ea7f5729bea0e172d3     423367  data/translations/nllb_3b/sl/translations.csv
    9f8418a7e5c2e3c3ac026b1389667656a8e10a829cac85145dd1c6f67bd53fcf     590819  data/translations/nllb_3b/sr/translations.csv
    e3000922d01d072bef92afedd825e7aa64cad53f99fa00d82270ff65ec67f586     593906  data/translations/nllb_3b/uk/translations.csv
"""
    ),
)
