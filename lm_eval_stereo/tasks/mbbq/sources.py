"""The upstream source of MBBQ: the bias and control sets in four languages and the reference's prompt and answer
phrase tables (``answer_detection.py``, read as data: its literal assignments are parsed, never executed).

The repository declares no licence and asks that MBBQ not be used for training: the files are downloaded at run time
from the pinned commit and never re-hosted (``rehost=False``). The project's offline mirror holds the data files but not
``answer_detection.py``; the generative tasks then take a file of the same layout from the option
``mbbq_detection_file``.
"""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

MBBQ = Source(
    name="mbbq",
    repo="Veranep/MBBQ",
    commit="adaa40172cdcf52eb403c01954a1aef8b0b1e97d",
    licence="none declared (derived from BBQ, CC BY 4.0); 'intended for model evaluation, NOT for model training'",
    citation="Neplenbroek, Bisazza, Fernández (2024). MBBQ: A Dataset for Cross-Lingual Comparison of Stereotypes in "
    "Generative LLMs. COLM 2024.",
    files=parse_pins(
        """
    3c4f73e2d38c5a8874af5cc6a8816373510a97936111d6c5784b30419c7a88fe    2613828  data/Age_control_en.jsonl
    edd59bb493f1f9bcd0fccfb9e6eff46395183cfd75f70af1676eb898a8294d78    2751564  data/Age_control_es.jsonl
    e7ccbfa5a583658ee381a2f78ceae5eca5dd43dfd5ba6acdd29b3c76312cd75e    2661684  data/Age_control_nl.jsonl
    316227f5bb0e8423ad27302a9bd894a4e27152e9fc08c6244934592d12e70a5a    2594024  data/Age_control_tr.jsonl
    15d34d6ba4dc7e8f2fc2362ef9a3a37ce148e04b2edd3e3700eac49e4c10871c    2815122  data/Age_en.jsonl
    44995575aa60e19e6db1bc9f262b2aaba07f563d7394eecab6475ad478a191cd    3095224  data/Age_es.jsonl
    bf4e0a636be38c0c0dbbac638baaabcc1e25206e7c785ef9b0077ccb2bfbbfa1    2931442  data/Age_nl.jsonl
    98ef9e3b899cee7faca8ad4f56e7976a757738babaedc36063a0c15da4c27bf8    2805588  data/Age_tr.jsonl
    0c7b587acd7a60dee4d8f1d6e507593b045b0091882afa008715a8ef3b72a708    1002276  data/Disability_status_control_en.jsonl
    a1745b9e88e4894ef91dbbd102166b2d426cd127ac58766ad00a43c782f5d864    1030712  data/Disability_status_control_es.jsonl
    a3159fa78c76b93626d435bd4f4ed646a5861e4d4ad0a08d2eeaec94082c2bbd    1010182  data/Disability_status_control_nl.jsonl
    eb18cc5eed09610986715b9cbb411bd1499b4cfa1fd07f87e563bdb0dfe3ebfb    1016328  data/Disability_status_control_tr.jsonl
    003424ffe5ebf26302c2cae5af9afd37acd1ff55a86b36412e6bc0b59e1fdc88    1114578  data/Disability_status_en.jsonl
    157202c79093cb182957ef316f477fb20d03a9ef6774078b5c35a1b6aac8db3b    1168560  data/Disability_status_es.jsonl
    d0f7bc310cce987d5fff853a922061c0a60d54a5ba6a1d627ca11e21b4112ac5    1143310  data/Disability_status_nl.jsonl
    44c5cd2a8b4b638b6b6c41e251ec579be82eb4beb9d2133140c9bb268270e720    1123088  data/Disability_status_tr.jsonl
    5e868f6d4d777ba42470e62a91eae89e166b7252ebbbb005a4bc8239cf8c5a10     415080  data/Gender_identity_control_en.jsonl
    cc6cf1ba62980541b2d031c0273e2614da938a355bfe2872d97beb6b8da05a12     436424  data/Gender_identity_control_es.jsonl
    784e1fa5db6200752dd132e8f1d1a4d09599592f1156bf21869b7273af28ccfd     424490  data/Gender_identity_control_nl.jsonl
    5cecd8e9c6d8fda9e235f91366a237f9aef7988d61361b64621f8394c2c6f9bc     420640  data/Gender_identity_control_tr.jsonl
    b6e9be11cb0d6c85bb305867e1b74338ff0ec2dfebc02760778a4364130a3d92     452846  data/Gender_identity_en.jsonl
    ba872fd284130a3deb6bdc62ad77002b89c67a4622e3d7cc268f233e0df555f6     484886  data/Gender_identity_es.jsonl
    d2f5a41d1f6d1fdbb05c4ac4fa887f62bd0c135cc3f2e3756bc7531e7e87903e     468204  data/Gender_identity_nl.jsonl
    1e2564322b1f4bce1f3fbddbf766e9c7871465a5eeac27d8911c47d7d0dffadd     463032  data/Gender_identity_tr.jsonl
    b6e72dbd119120b6c5da9c2a03eac6675dc07083bc0366e954dcd00fc726c45c     934078  data/Physical_appearance_control_en.jsonl
    2936c5fd2a30241488e7c771823ab95f48c53861b000c5b9c78553730d1cec9f     980354  data/Physical_appearance_control_es.jsonl
    70ce0324ccf682a14d35c898b85626315429b8128da2ffad307bbce5ed6ae9d4     944584  data/Physical_appearance_control_nl.jsonl
    94659b331035f55b73ae91f3e2a009c5eb8c1cf5347e0ebaa349a5eed4372db7     931948  data/Physical_appearance_control_tr.jsonl
    be6d82ef5799133444cd79a16b70f88621f8b30f2545d2973b11d1f8e363df32    1030696  data/Physical_appearance_en.jsonl
    423d34b206aad8586041a4e5ba77781cce887af8b5d0fbe70414b34757e317e8    1091558  data/Physical_appearance_es.jsonl
    a9dca56989be0c98bf2ca0150196241ed39794867c551e82741462d8b91fe890    1061228  data/Physical_appearance_nl.jsonl
    fd1aadb74dcc3ea24eb3932d4db2784836786844e1f7fb68972a0552035ab69f    1016296  data/Physical_appearance_tr.jsonl
    807778b3f974ed3873e12d3930a64cac2c8eff66ba9b3e35d2c25b7d51fb6535    2773846  data/SES_control_en.jsonl
    139988d225bb860b668c114f5fba687129a89fbe33d2255ddc09e67534bbff5a    2941610  data/SES_control_es.jsonl
    653f33ffa7c516b462d2e8d1a3038a9d7c413b22e09d2b77c621477b2e763838    2843282  data/SES_control_nl.jsonl
    3f586dd34ee2f21d1f1f80923b576d44ac6b702eb96a25ece545c6a10216c31a    2825666  data/SES_control_tr.jsonl
    6603a4d2ac5293b2718b13d439361a9b8a16e6be8f600b150b8ab9c0d432efb9    2974320  data/SES_en.jsonl
    7108b3c6809e1557aa366060961d02f30dc6112f2d35863faf745f92fb9ef089    3206386  data/SES_es.jsonl
    19969eb8bbd8f783d40ee42db2bccfda9bf3be132a325b60ef37affdb2ee51a7    3084666  data/SES_nl.jsonl
    7db84dfac8ce1031ac7812c51b88b66f79c00b8b0d2646e0ce47035775aa214f    2975938  data/SES_tr.jsonl
    c4c5e4c4e7d08f2c3247ea791d73746497cd1c0e1837deb1e0511efbb5a1c0fc     117250  data/Sexual_orientation_control_en.jsonl
    9235674ce1b6df3e2f36a3cfe0e0d3262e7514e5ee565cc7b4f0adef9bb69f99     118710  data/Sexual_orientation_control_es.jsonl
    22fe68db0fd8e2ba315b487186135688d14633950b146ffcb37ec2ba9a44473f     117606  data/Sexual_orientation_control_nl.jsonl
    b1e3d11e3b05ec51eaae98c665cf70a712f56323456d66cc3751e68f3d503f91     118462  data/Sexual_orientation_control_tr.jsonl
    d61426a4634a8eecc44ca258c3d70b9730dadcefc625bd5890f1207269d7b660     123778  data/Sexual_orientation_en.jsonl
    8e75c1e1931fc288b91c9418b35267429f8bbdd2848e04feeaa531fecccf14d9     126566  data/Sexual_orientation_es.jsonl
    894e58600a28bb0063c775517daff5054a827ef3a6c4fdd17605a2703edb6e49     127058  data/Sexual_orientation_nl.jsonl
    e4f17323bd73fbba9df7f3957697d86bdfd2774ed579b838772f7a486612001c     129162  data/Sexual_orientation_tr.jsonl
    ae2b9f8c722ea6ce243d8465019d4d6c6937d66ee7cd725560ee51775fb34b99      41813  answer_detection.py
"""
    ),
    rehost=False,
)
