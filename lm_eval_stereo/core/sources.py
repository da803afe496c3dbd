"""Every upstream data source of the plugin: repository, pinned commit, licence, and per file its pin and size.

Files are resolved in this order:

1. the offline mirror ``$LM_EVAL_STEREO_DATA_DIR/<source>/<upstream path>`` when that variable is set
   (it replaces the network completely: a missing file there is an error);
2. the cache ``$LM_EVAL_STEREO_CACHE/<source>/<commit>/<upstream path>`` (default ``$XDG_CACHE_HOME/lm_eval_stereo``
   or ``~/.cache/lm_eval_stereo``);
3. a download from ``$LM_EVAL_STEREO_BASE_URL/<repo>/<commit>/<upstream path>`` (default base
   ``https://raw.githubusercontent.com``; point it at any host that serves the same layout), written into the cache
   only when complete and verified (:mod:`lm_eval_stereo.core.download`).

Every file is checked against its pin (:mod:`lm_eval_stereo.core.pins`: its sha256, or its git blob id where no
sha256 is known) before it is used; a mismatch raises :class:`~lm_eval_stereo.core.errors.ChecksumError` and the file
is never read. ``lm-eval-stereo data`` lists, fetches, mirrors and verifies these files
(:mod:`lm_eval_stereo.datastore`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lm_eval_stereo.core import download
from lm_eval_stereo.core.errors import DataUnavailableError, NoNetworkError
from lm_eval_stereo.core.pins import Pin, parse_pins, sha256_of

__all__ = ["SOURCES", "Source", "cache_file", "cache_path", "fetch", "get_source", "in_mirror", "sha256_of"]

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "LM_EVAL_STEREO_DATA_DIR"
CACHE_ENV = "LM_EVAL_STEREO_CACHE"
OFFLINE_ENV = "LM_EVAL_STEREO_OFFLINE"
BASE_URL_ENV = "LM_EVAL_STEREO_BASE_URL"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
DOWNLOAD_TIMEOUT_S = 60


@dataclass(frozen=True)
class Source:
    """One upstream repository pinned at a commit.

    ``files`` pins the upstream files by path. ``mirror_files`` pins converted files that an offline mirror may hold
    instead of an upstream file (same stem, other suffix); ``mirror_converter`` (``module:function``, called with an
    upstream path and its verified local file) returns those converted copies as ``{mirror path: bytes}``.
    ``rehost`` is False where the licence allows no re-hosting: a mirror of it is for one's own use.
    """

    name: str
    repo: str
    commit: str
    licence: str
    citation: str
    files: Mapping[str, Pin]
    mirror_files: Mapping[str, Pin] = field(default_factory=dict)
    mirror_converter: str = ""
    rehost: bool = True

    def url(self, path: str) -> str:
        """Where ``path`` is downloaded from (under ``$LM_EVAL_STEREO_BASE_URL``)."""
        return f"{base_url()}/{self.repo}/{self.commit}/{path}"

    def pin(self, path: str) -> Pin:
        """The pin of an upstream or mirror file; KeyError for any other path."""
        if path in self.files:
            return self.files[path]
        if path in self.mirror_files:
            return self.mirror_files[path]
        raise KeyError(f"{path!r} is not a known file of source {self.name!r}")


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            name="stereoset-multi",
            repo="slds-lmu/stereotypes-multi",
            commit="883f005dd9d003a6974e498f435629ec46d931c7",
            licence="CC BY-SA 4.0 (translation of the StereoSet dev set; the repository declares no licence)",
            citation="Öztürk et al., How Different Is Stereotypical Bias Across Languages? (2023)",
            files=parse_pins(
                """
    f9107286b96c67b932bf5efc4a065f06c7d835f1c29fd282d8fda7a43688b517    3221935  create_dataset/data/intersentence/df_intersentence_de.pkl
    f0fb0258fedd0823975412ba796997d3c34ee1988f5526b514ea8a6390e8e4db    3141129  create_dataset/data/intersentence/df_intersentence_en.pkl
    5183a7bf2aef552cd9d8427370b97c803759fdeba120623779d037aeccdbf14a    3202227  create_dataset/data/intersentence/df_intersentence_es.pkl
    acd0ad25d0c46eda0ce2999f09f04d4fc603e6242ba5ff6ab9c68aa469e02c7a    3245067  create_dataset/data/intersentence/df_intersentence_fr.pkl
    cd014f42d29db9c9993e28bcab5795c6a1d8a4e0af0b6c5f45ac48976e2dd15c    3180903  create_dataset/data/intersentence/df_intersentence_tr.pkl
    43bcb9eadab177b9593743f923fa5413ac3aa60486bef2f112057fa43ae54f7d    3300263  create_dataset/data/intrasentence/df_intrasentence_de.pkl
    f83353183ac20ffcdc08c5cc905b89d9748c8ebee7bc319bb9d1e2311deb1e1c    3197280  create_dataset/data/intrasentence/df_intrasentence_en.pkl
    0ad6fbcbced6311f5ba0050794ad7d43d00d48ab9e34397dcd0740047f303aa9    3259659  create_dataset/data/intrasentence/df_intrasentence_es.pkl
    adb20df258874a0205065bd119f7a49d7d1b51f017f1ceb55a2478498debbe74    3302457  create_dataset/data/intrasentence/df_intrasentence_fr.pkl
    81ca8c31ee9837a83729f5e1c042ad1aa12f6a91b423fc4c79e2c3bfdfd0c6c9    3242411  create_dataset/data/intrasentence/df_intrasentence_tr.pkl
    3d8b5310806b6a4634e239d0df0ae7fe2b39b6138f5703ff6a56ab9109b2297b    1230048  results/predictions/gpt2_GPT2LM_GPT2LM_d_en.json
"""
            ),
            mirror_files=parse_pins(
                """
    8f35bf9eb93e3609f403480d077434faa379c1ccaa14821b6db1d780c7ca38ca    1319983  create_dataset/data/intersentence/df_intersentence_de.jsonl
    38b040dd52b9c80dc66e196ad99c504cc96723eb83307b739e465fbdc022c0fe    1194874  create_dataset/data/intersentence/df_intersentence_en.jsonl
    72360b058c9c4bd40079f1c88672f18d7dc6db0d70894e89fab99d47a16a904d    1298316  create_dataset/data/intersentence/df_intersentence_es.jsonl
    4b5827d5d5a4f45a2699ad48d9052106c67234e1327f2001f3622ff106de3ab0    1341147  create_dataset/data/intersentence/df_intersentence_fr.jsonl
    d685451b5e42037d5b912ead1e95e0969e341bf79ff5ced5365956a3ec8606f7    1277331  create_dataset/data/intersentence/df_intersentence_tr.jsonl
    a036d7b0a0f8100e5fd9ad4df0a198b90819adf08e6e321746ef4e37aba797e2    1474302  create_dataset/data/intrasentence/df_intrasentence_de.jsonl
    31ace68fc0db2c94098b85410cf69ba895aa9706f38cd20b29d7becfe069b8ab    1341533  create_dataset/data/intrasentence/df_intrasentence_en.jsonl
    017ee1b95a81e668f3ca9b5a23f745b4bd52a8d770c12bf7df8f0adb3ad3b874    1447234  create_dataset/data/intrasentence/df_intrasentence_es.jsonl
    4d586738e7eb1d801ffe7e3d6295a0a703807cdc6f193dd892ad6fe4f39b7737    1490025  create_dataset/data/intrasentence/df_intrasentence_fr.jsonl
    6cd37a564e0b815e133b0e63cc0abe08f316133c9e997253112eba3ab4db4efc    1430156  create_dataset/data/intrasentence/df_intrasentence_tr.jsonl
"""
            ),
            mirror_converter="lm_eval_stereo.tasks.stereoset_multi.data:mirror_copies",
        ),
        Source(
            name="gest",
            repo="kinit-sk/gest",
            commit="7dd908cae11720ee5d95e43a4ab94fb410c8b790",
            licence="Apache-2.0",
            citation="Pikuliak et al., Women Are Beautiful, Men Are Leaders (2024)",
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
        ),
        Source(
            name="german-gender-bias",
            repo="akristing22/Gender-Bias-in-German-LLMs",
            commit="60bc5dd9ac99c3d1181424fbfe5ed96f6125fd14",
            licence="none declared (all rights reserved)",
            rehost=False,
            citation="Gnadt, Thulke, Kopeinik, Schlüter, GeBNLP 2025",
            files=parse_pins(
                """
    22b92f9b043c1e51cf861169cabf5b735fb242410252162518d738be16e5e8b4     934132  data/GenderPersona.csv
    e67c4adb26bc9af55886e385c89e42751a5ca7b0d0af2edd080f4e7a3b7d99ec       1955  data/GenderPersona_templates.csv
    00c808876baf8cabc2996c45b23642606bc7b0fa12853fc126c253294c7df23f       2487  data/General.csv
    00ad92b654b6c41436da66ff8a38ed43da0186a32657cc3631c26630202f04c2    1845948  data/GerBBQ.csv
    3b453ad4a174564c48b8986cdb4c32c2c926760d5ad71fe4bff495a5ea854113    3206980  data/GerBBQ_AMB.csv
    5bc7a4bf06006457d5e546a80206deebb7fc41ca9056ac781442de9740200a6b    4087024  data/GerBBQ_DIS.csv
    b1dff1595fef5c58e3dc217da814e99ce0aa95f59d4360f62c8317e1f8b7d05a      11230  data/GerBBQ_templates.csv
    5e64f8aa4ace3331d38efba2704e1718beb0cbbc9c6719be0b15e2fd857b3eed       1188  data/Names.csv
    0d2d0fa5b50ddd87c4d4190b9d866ff31f33575ce672cfae9cfb42fdb9de8492        838  data/NeutralPersona.csv
    ac3cf52baae4f6931fd3e1b20300a2ac670cd0da7a60686797b6326a65ea3868      10564  data/Occupations.csv
    611effa0501f200ecbdf8abde21b36d96078c246f95699608c4e777437fbe97f      85121  data/SexistStatements.csv
    569bcf153a0d7e6000eecdfa547e45e8ff5661b9f460212e382238e4a8f7f3ff      93443  data/StereoPersona.csv
    efecd2ec6d0acd932fb917b918bb5001f7d1043d638bcb01391c67775f1d95c0       2414  data/gendered_corpus.csv
    afb9c1fa4bbb87b1488fd8ec9cf193bacace3e8af306a281832198e0021af914     938916  data/typical/GenderPersona.csv
    6da143a27b50bf0aa7fe21a279c1a81283fdb3dc3977abf22c451857b4d8cb84        850  data/typical/NeutralPersona.csv
    37a63336c6bf866fb97bb3b0924cc33fdb069b4c816e75501e7afb9cbf629c6f      10876  data/typical/Occupations.csv
    974c043f147242302fca409b7c6710c92dd7f8055eecdbe69b2d4bf826a6be8f      94355  data/typical/StereoPersona.csv
    efecd2ec6d0acd932fb917b918bb5001f7d1043d638bcb01391c67775f1d95c0       2414  data/typical/gendered_corpus.csv
    fe037558a258b367d29f3b6c248c6f5d0a7e0d2c13451ed472939729b2bea287       5470  sample_output/Claude/metrics.json
    a2b9a1c3a60d429364b989b012e3d4c40af10b5158a21241f49cae1fc1493975    3737219  sample_output/Euro/GerBBQ_AMB_output.csv
    e0ad9668fc462ef3144600be97c71fe71bbd80fae314d0d6ce8dcb433a19563b     632253  sample_output/Euro/SexistStatements_output.csv
    8f2ffd6107146abc4d2fd1045ea25d045da16349884c8cb278ab2e41633da980       5627  sample_output/Euro/metrics.json
    9fd2775bf268c8b3d25e73c04e4e88496edcea8f9231adbd4ea34062361fd14e       5556  sample_output/GPT/metrics.json
    dfb2d98103493aaf11fbcad972ea6f00e5da9f686704fd4e19d5e0fecd3db5cd       3142  sample_output/GenderPersona_test/metrics.json
    8dc0b7ad0d84c124e5e86fc2b38611f83e1f2a135c26ba3ead567a32a4c5a553       5565  sample_output/Llama/metrics.json
    ce1261b4d5177176eaf37d9014ffd0bb6161dfb4a60fbf07bfe254790e3c4dd7       5573  sample_output/Nemo/metrics.json
    d13d66e34bad73fc67f777ae4d7cdf025721fe0bc97b7471fd4710093bc007f3       5778  sample_output/Occiglot/metrics.json
    5d9ef99bffda3f52836ea514cf20cc2987794979acc1597c3ed6dbfbf03ae927       5394  sample_output/Sauerkraut/metrics.json
    6b7c856fec7cded6df30e2c2b55669bdc1480b61282a3decb2b4a5a3152e51b1       5656  sample_output/Uncensored/metrics.json
    49c6f418cf2fb437335060df3639d4587d17beb7aba4fe66980d6492916da01a       3918  sample_output/typical/Claude/metrics.json
    a206943ce4c565f5b2e8f69f0892e8c27bc4bcb59bf19e9f91e9a050466ed3c0       3868  sample_output/typical/Euro/metrics.json
    3b3a139035f483ad29ec35f973b5bade6714ed224e0e5c948128a864071c1a78       3881  sample_output/typical/GPT/metrics.json
    9265ca50a3e94ad172abf8a6a7102b7071ac48c1da85c0628806df54ad0ccfbf       3825  sample_output/typical/Llama/metrics.json
    ec1ed5319949043652ff89151a92dfa65529dcadf13b4691a9e3f13c509d6b03       3815  sample_output/typical/Nemo/metrics.json
    ba6798705e62c8b540c8599c6a9023f2eee5af484f544d33d0e698466c2a583f       3877  sample_output/typical/Occiglot/metrics.json
    81aa8c9ecc35645ca881dc569d14e869bac56b33066bba8531ffa1bccc40bcad       3850  sample_output/typical/Sauerkraut/metrics.json
    a3d7309258355f6fe0ef0ffb0c02e1abb63da70cf5ef4b1f7d6b106a08ce244c       3809  sample_output/typical/Uncensored/metrics.json
"""
            ),
        ),
        Source(
            name="s_jsd-multilingual",
            repo="VSteinborn/s_jsd-multilingual-bias",
            commit="b10302047b55043004a0280f8c2f63236ccea878",
            licence="CC BY-SA 4.0",
            citation="Steinborn et al., An Information-Theoretic Approach and Dataset for Probing Gender Stereotypes in Multilingual Masked Language Models (2022)",
            files=parse_pins(
                """
    172a8ad57c5b25647cd91affa7e3472d06dcdcbd783a129aa38dfd148a9c8665      85255  data/cps_translated_ar_formatted.csv
    68495e0185780c8a47fc4d999a1774f5718be8654c8926f67f97d4f4b5ba1630      70201  data/cps_translated_de_formatted.csv
    e965762fa00af7648e5146c504fdd4940b7cf9703f85394257aaaf70d8c28d0c      64549  data/cps_translated_en_formatted.csv
    a20b411b62b7f8255381429475c90b8205425dff8c6d0f4845b604cf106b6a1d      67601  data/cps_translated_fi_formatted.csv
    a50e0f3cca8b7acfeb0a618bb67032d9c592d00e7ea4bff7b54c36640f7d8201      71451  data/cps_translated_fr_formatted.csv
    669d2c8477786e5c278081bcc3192a432feb8ffab57fd623d0c1c77fc6e2c31b      68158  data/cps_translated_id_formatted.csv
    6c8e90c6bd113bdbd719860b87f0baffc0d4729b4a3032452073e1af1d078dc2      74674  data/cps_translated_ko_formatted.csv
    34a86c49aa89f6c699ea481b530ab894c27373b73d080d1f0069a0041823299b     110345  data/cps_translated_th_formatted.csv
    e724d536191dd6d1e4eed83748a4285af50a98c1d5c263be650bd56f0ee970c5      77141  data/cps_translated_vi_formatted.csv
    d92b05b1bebfd59b7d2d3db1d8d435e9915e5713d8e03b52e6ba5942ff5f6066      64173  data/cps_translated_zh_formatted.csv
"""
            ),
        ),
        Source(
            name="crows-pairs",
            repo="nyu-mll/crows-pairs",
            commit="8aaac11c485473159ec9328a65253a5be9a479dc",
            licence="CC BY-SA 4.0",
            citation="Nangia et al., CrowS-Pairs (2020)",
            files=parse_pins(
                """
    dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c     437764  data/crows_pairs_anonymized.csv
"""
            ),
        ),
        Source(
            name="stereotype-leakage",
            repo="AnnaSou/Stereotype_Leakage",
            commit="8254eb7899da6e81969baca9e0aa76434565e92d",
            licence="MIT",
            citation="Cao, Sotnikova et al., Multilingual LLMs Leak Human Stereotypes across Language Boundaries (2024)",
            files=parse_pins(
                """
    c9aa217dfb423e25810a72ddad7e928ee3b01091ed9d1acce7b73706c57bc86f      32528  aggre_tem.py
    7bf81970c37bf625bc416b9715f3c60f2767d3618b169cfe9f94667a4ecaec0a      98852  asso.py
    9398f50a84744a7dede2711be26670aeb58188dcd89ec6d2901a0cb2dc2636cd      30314  dataset/ChatGPT_ABC_generations.ipynb
    dcbf225f2b84486e4d67678ccf74a25f884e54fa8621c1e7e7f469f8f2910dea      22162  dataset/Datasheet.md
    10d32c1abe7e9e98a4402ad94e7d6d63d1224fe67f737086a6fc578be1817b63       7155  dataset/aggregated_data_EN.csv
    c93854e3f8097eb51ff5ca9b3bc6af54550dc2c2dbffe9dc2688e5a5653a46f1       6480  dataset/aggregated_data_HI.csv
    5c40e744d685b250059bd197ef4c08757549008c12b06c9e34e7c1c68a6b1d79       6932  dataset/aggregated_data_RU.csv
    28a04a359c88c13883cae721c07dc3c6427dc05d72f17f8b16738463029ccc18       6679  dataset/aggregated_data_ZH.csv
    1fb8cdd6f6e1e37061708ce1644b268593783e37c39a3213ecf519aaa2006e60       1664  dataset/annotators_demographics_EN.csv
    cfbd8331de8c382ca5d738a743166045e22380604beb78c1b21ee290583b7452       4753  dataset/annotators_demographics_HI.csv
    1d90729bfb9a07b1356596733ab858c702d3d4b179aaea7cc327ad1a0ed05bc8       3499  dataset/annotators_demographics_RU.csv
    b8f8dabd80416f56e5d267b687a6ae2c4a36fe3b7e94965f1a662c6a466b7764       1692  dataset/annotators_demographics_ZH.csv
    115a1f692533d78832a60ce0b19b232982274566cf97bb83cc3a9438ef9bc984     102514  dataset/data_full_chinese.json
    d2bcc1cbae319284df1ebc28272de0e9478ad6f1a9d9eba252a4bccfcfcff685      85236  dataset/data_full_english.json
    f76c12631046302a2986e1f1d28375fc3f90232077032795d2c67a571a6f799c     100291  dataset/data_full_hindi.json
    6d66000054bf6033fb6207561f19c20453442198a9f3553641caa438d92c1c27      90534  dataset/data_full_russian.json
"""
            ),
        ),
    )
}


def get_source(name: str) -> Source:
    try:
        return SOURCES[name]
    except KeyError:
        raise KeyError(f"unknown data source {name!r}; known: {', '.join(sorted(SOURCES))}") from None


def base_url() -> str:
    """``$LM_EVAL_STEREO_BASE_URL`` without a trailing slash, else GitHub's raw-file host."""
    return (os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")


def mirror_dir() -> Path | None:
    """The offline mirror directory, or None when ``LM_EVAL_STEREO_DATA_DIR`` is unset."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    value = os.environ.get(CACHE_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "lm_eval_stereo"


def cache_path(source: Source, path: str) -> Path:
    """Where the cache keeps ``path`` of ``source`` (whether or not it is there)."""
    return cache_dir() / source.name / source.commit / path


def in_mirror(source_name: str, path: str) -> bool:
    """True when an offline mirror is configured and holds ``path`` of ``source_name``."""
    root = mirror_dir()
    return root is not None and (root / source_name / path).is_file()


def _mirror_file(root: Path, source: Source, path: str) -> Path:
    """``path`` in the mirror ``root``; DataUnavailableError when it is missing or a directory."""
    candidate = root / source.name / path
    if candidate.is_dir():
        raise DataUnavailableError(
            f"{candidate} in the offline mirror {DATA_DIR_ENV}={root} is a directory; expected the file "
            f"{source.url(path)} there."
        )
    if not candidate.is_file():
        raise DataUnavailableError(
            f"{candidate} is missing from the offline mirror {DATA_DIR_ENV}={root}. "
            f"Copy {source.url(path)} there, or unset {DATA_DIR_ENV} to download it."
        )
    return candidate


def fetch(source_name: str, path: str) -> Path:
    """Return a local, verified copy of ``path`` from source ``source_name``: the mirror's when one is set, else the
    cache's (downloaded first if needed)."""
    source = get_source(source_name)
    pin = source.pin(path)
    root = mirror_dir()
    if root is not None:
        candidate = _mirror_file(root, source, path)
        return pin.verify(candidate, str(candidate))
    return cache_file(source_name, path)


def cache_file(source_name: str, path: str, progress: download.Progress | None = None) -> Path:
    """``path`` of ``source_name`` in the cache, verified: already there, else copied from the offline mirror when one
    is set, else downloaded. ``progress`` is called with the number of bytes as they are read."""
    source = get_source(source_name)
    pin = source.pin(path)
    target = cache_path(source, path)
    if target.is_file():
        if pin.digest_of(target) == pin.digest:
            if progress is not None:
                progress(target.stat().st_size)
            return target
        logger.warning("cached %s does not match its pin %s; fetching it again", target, pin)
        target.unlink()
    root = mirror_dir()
    origin = _mirror_file(root, source, path) if root is not None else None
    part = _new_part(target, path)
    if origin is not None:
        try:
            with open(origin, "rb") as stream:
                return download.fill(part, stream, target, pin, str(origin), progress=progress)
        except OSError as exc:
            raise DataUnavailableError(
                f"{origin} cannot be copied into the cache {cache_dir()} ({exc.strerror or exc})"
            ) from None
    how_to_fix = (
        f"Set {DATA_DIR_ENV} to an offline mirror laid out as <dir>/{source.name}/{path} "
        "(`lm-eval-stereo data mirror DIR` writes one on a machine with network; "
        "or a copy of the project's shared/data folder)."
    )
    url = source.url(path)
    if os.environ.get(OFFLINE_ENV, "").strip() not in ("", "0"):
        part.unlink()
        raise NoNetworkError(f"{url} cannot be downloaded: {OFFLINE_ENV} is set. {how_to_fix}")
    logger.info("downloading %s", url)
    return download.download(
        url, part, target, pin, timeout=DOWNLOAD_TIMEOUT_S, how_to_fix=how_to_fix, progress=progress
    )


def _new_part(target: Path, path: str) -> Path:
    try:
        return download.new_part(target)
    except OSError as exc:
        raise DataUnavailableError(
            f"the download cache {cache_dir()} cannot hold {path} ({type(exc).__name__}: {exc.strerror or exc}): "
            f"point {CACHE_ENV} at a writable directory (default ~/.cache/lm_eval_stereo), or set {DATA_DIR_ENV} "
            "to an offline mirror."
        ) from None
