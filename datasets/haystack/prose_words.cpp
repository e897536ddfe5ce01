// The prose generator's vocabulary, written for kvgate. No digits anywhere: numeric needles and
// access codes must be the only numbers in a generated haystack.
#include "datasets/haystack/prose_words.h"

namespace kvgate::haystack {

namespace {

// ---- settings -----------------------------------------------------------------------------------

const char* const kHarborPlaces[] = {"the harbor", "the fish market", "the breakwater", "the lighthouse", "the boatyard",
                                     "the customs house", "the old pier", "the net loft", "the ferry landing",
                                     "the chandlery", "the sea wall", "the tide pools"};
const char* const kHarborObjects[] = {"a coil of rope", "the tide tables", "a cracked oar", "the brass compass",
                                      "a crate of herring", "the harbor ledger", "a tarred canvas", "the signal lamp",
                                      "a bent anchor", "the mooring chain", "a bucket of bait", "the foghorn"};
const char* const kHarborThings[] = {"nets", "buoys", "lobster pots", "gulls", "oars", "sails", "crates", "ropes",
                                     "lanterns", "floats"};
const char* const kHarborPeople[] = {"fishermen", "dock workers", "sailors", "net menders", "ferry passengers",
                                     "fish buyers"};
const char* const kHarborRoles[] = {"the harbor master", "the ferryman", "an old fisherman", "the lighthouse keeper",
                                    "the boatbuilder", "a young deckhand"};
const char* const kHarborTopics[] = {"the price of fuel", "the new breakwater", "the winter catch", "the ferry timetable",
                                     "the silting of the channel", "the lighthouse repairs", "the shortage of crews"};
const char* const kHarborSounds[] = {"the clang of a bell", "gulls arguing over scraps", "the slap of water on wood",
                                     "an engine coughing", "the creak of rigging"};
const char* const kHarborSmells[] = {"salt and diesel", "drying seaweed", "tar and smoke", "fresh fish"};
const char* const kHarborEvents[] = {"the storm", "the spring tide", "the regatta", "the night the lamp failed",
                                     "the autumn gales"};

const char* const kVillagePlaces[] = {"the village square", "the bakery", "the old mill", "the church steps",
                                      "the post office", "the village hall", "the inn", "the bridge over the stream",
                                      "the schoolhouse", "the cobbler's shop", "the well", "the orchard lane"};
const char* const kVillageObjects[] = {"a basket of bread", "the parish register", "a broken clock", "the mill key",
                                       "a bundle of letters", "the notice board", "a jar of honey", "the church bell rope",
                                       "a pair of boots", "the old map", "a wooden ladder", "the hall accounts"};
const char* const kVillageThings[] = {"loaves", "letters", "lamps", "chairs", "bells", "baskets", "candles", "tools",
                                      "posters", "keys"};
const char* const kVillagePeople[] = {"villagers", "shopkeepers", "children", "neighbors", "churchgoers", "farmhands"};
const char* const kVillageRoles[] = {"the baker", "the postmistress", "the schoolteacher", "the innkeeper",
                                     "the miller", "the old cobbler"};
const char* const kVillageTopics[] = {"the summer fair", "the new road", "the price of flour", "the repairs to the roof",
                                      "the school inspection", "the quarrel over the well", "the mill's future"};
const char* const kVillageSounds[] = {"the church bell", "children singing", "a cart on the cobbles",
                                      "a dog barking two streets away", "the mill wheel turning"};
const char* const kVillageSmells[] = {"fresh bread", "wood smoke", "cut grass", "wet stone"};
const char* const kVillageEvents[] = {"the fair", "the flood", "the harvest supper", "the election",
                                      "the long winter"};

const char* const kFarmPlaces[] = {"the barn", "the lower field", "the orchard", "the hay loft", "the dairy",
                                   "the farmhouse kitchen", "the cattle shed", "the vegetable garden",
                                   "the far pasture", "the grain store", "the pond", "the tractor shed"};
const char* const kFarmObjects[] = {"a sack of seed", "the milking stool", "a rusted plough", "the farm diary",
                                    "a bale of hay", "the weather vane", "a pail of milk", "the tractor battery",
                                    "a crate of apples", "the gate latch", "a roll of wire", "the feed bill"};
const char* const kFarmThings[] = {"sheep", "hens", "fence posts", "apples", "hay bales", "calves", "potatoes",
                                   "buckets", "seedlings", "geese"};
const char* const kFarmPeople[] = {"farmers", "pickers", "shepherds", "hired hands", "neighbors", "buyers"};
const char* const kFarmRoles[] = {"the farmer", "the shepherd", "the vet", "the dairymaid", "a hired hand",
                                  "the orchard keeper"};
const char* const kFarmTopics[] = {"the dry summer", "the price of feed", "the new tractor", "the lambing season",
                                   "the drainage of the lower field", "the apple harvest", "the sale of the north meadow"};
const char* const kFarmSounds[] = {"cows lowing", "the rattle of a tractor", "hens in the yard", "rain on the tin roof",
                                   "a gate banging in the wind"};
const char* const kFarmSmells[] = {"hay and manure", "ripe apples", "turned earth", "warm milk"};
const char* const kFarmEvents[] = {"the drought", "the hailstorm", "the harvest", "the lambing", "the county show"};

const char* const kCityPlaces[] = {"the station", "the library", "the covered market", "the museum",
                                   "the tram depot", "the town hall", "the riverside cafe", "the printing works",
                                   "the bookshop", "the park gates", "the clock tower", "the night bus stop"};
const char* const kCityObjects[] = {"a folded newspaper", "the museum catalogue", "a borrowed umbrella",
                                    "the tram ticket", "a box of photographs", "the lost property ledger",
                                    "a dented thermos", "the reading list", "a roll of blueprints", "the spare key",
                                    "a stack of invoices", "the visitor book"};
const char* const kCityThings[] = {"books", "trams", "umbrellas", "pigeons", "posters", "tickets", "maps", "crates",
                                   "bicycles", "photographs"};
const char* const kCityPeople[] = {"commuters", "clerks", "students", "tourists", "market traders", "librarians"};
const char* const kCityRoles[] = {"the librarian", "the station clerk", "the museum guard", "a tram driver",
                                  "the printer", "the bookseller"};
const char* const kCityTopics[] = {"the new tram line", "the museum's budget", "the strike at the printing works",
                                   "the rents near the river", "the closing of the old theatre", "the library extension",
                                   "the traffic on the bridge"};
const char* const kCitySounds[] = {"trams grinding round the corner", "a street musician", "the station announcements",
                                   "pigeons on the roof", "a siren far off"};
const char* const kCitySmells[] = {"coffee and exhaust", "old paper", "rain on hot pavement", "roasting chestnuts"};
const char* const kCityEvents[] = {"the strike", "the exhibition", "the blackout", "the marathon", "the book fair"};

const char* const kMountainPlaces[] = {"the mountain hut", "the ridge", "the pass", "the glacier", "the pine woods",
                                       "the summit cairn", "the ranger station", "the scree slope", "the alpine lake",
                                       "the cable car station", "the valley floor", "the shepherd's shelter"};
const char* const kMountainObjects[] = {"a frayed climbing rope", "the trail register", "a dented stove",
                                        "the avalanche report", "a pair of crampons", "the radio", "a bag of kindling",
                                        "the first aid kit", "a faded trail map", "the hut logbook", "an ice axe",
                                        "the weather board"};
const char* const kMountainThings[] = {"boots", "tents", "stones", "pine cones", "marmots", "ropes", "cairns",
                                       "blankets", "flasks", "goats"};
const char* const kMountainPeople[] = {"climbers", "hikers", "rangers", "guides", "skiers", "herders"};
const char* const kMountainRoles[] = {"the hut warden", "the mountain guide", "a ranger", "an old herder",
                                      "the cable car operator", "a young climber"};
const char* const kMountainTopics[] = {"the avalanche risk", "the melting glacier", "the new trail markers",
                                       "the rescue fund", "the closing of the pass", "the snow forecast",
                                       "the repairs to the hut roof"};
const char* const kMountainSounds[] = {"wind across the ridge", "rockfall in the gully", "cowbells below",
                                       "the crack of ice", "a distant helicopter"};
const char* const kMountainSmells[] = {"pine resin", "wood smoke and wet wool", "cold stone", "coffee on the stove"};
const char* const kMountainEvents[] = {"the avalanche", "the first snowfall", "the rescue", "the thaw",
                                       "the long storm"};

const char* const kResearchPlaces[] = {"the laboratory", "the field station", "the greenhouse", "the lecture hall",
                                       "the archive", "the observatory", "the seminar room", "the cold store",
                                       "the workshop", "the weather mast", "the specimen room", "the rooftop garden"};
const char* const kResearchObjects[] = {"a tray of samples", "the lab notebook", "a cracked microscope slide",
                                        "the calibration log", "a box of soil cores", "the grant proposal",
                                        "a spare battery pack", "the field map", "a bundle of pressed plants",
                                        "the draft report", "a faulty thermometer", "the telescope cover"};
const char* const kResearchThings[] = {"samples", "notebooks", "slides", "seedlings", "sensors", "charts", "beetles",
                                       "test tubes", "soil cores", "cables"};
const char* const kResearchPeople[] = {"students", "technicians", "researchers", "visiting scholars", "volunteers",
                                       "reviewers"};
const char* const kResearchRoles[] = {"the professor", "the lab technician", "a doctoral student", "the archivist",
                                      "the station manager", "a visiting botanist"};
const char* const kResearchTopics[] = {"the missing data", "the new funding rules", "the beetle survey",
                                       "the broken freezer", "the conference deadline", "the soil results",
                                       "the move to the new building"};
const char* const kResearchSounds[] = {"the hum of the freezers", "a printer starting up", "rain on the greenhouse glass",
                                       "the ventilation fans", "a kettle in the next room"};
const char* const kResearchSmells[] = {"disinfectant", "wet soil", "burnt coffee", "old books"};
const char* const kResearchEvents[] = {"the power cut", "the inspection", "the conference", "the flood in the basement",
                                       "the field season"};

const char* const kRiverPlaces[] = {"the river bank", "the lock", "the boathouse", "the towpath", "the weir",
                                    "the water meadow", "the old ferry crossing", "the willow island",
                                    "the canal basin", "the mill race", "the reed beds", "the stone bridge"};
const char* const kRiverObjects[] = {"a leaking canoe", "the lock keeper's log", "a fishing rod", "the river gauge",
                                     "a tin of paint", "the boathouse key", "a sodden map", "the winch handle",
                                     "a bundle of reeds", "the flood marker", "a wooden paddle", "the mooring permit"};
const char* const kRiverThings[] = {"swans", "barges", "reeds", "paddles", "willows", "herons", "ducks", "punts",
                                    "dragonflies", "ropes"};
const char* const kRiverPeople[] = {"rowers", "anglers", "walkers", "boat owners", "lock keepers", "swimmers"};
const char* const kRiverRoles[] = {"the lock keeper", "an angler", "the boathouse manager", "a rowing coach",
                                   "the bargeman", "the river warden"};
const char* const kRiverTopics[] = {"the rising water", "the new moorings", "the rowing race",
                                    "the repairs to the lock gates", "the water quality", "the closing of the towpath",
                                    "the otters seen near the weir"};
const char* const kRiverSounds[] = {"water over the weir", "oars knocking", "ducks squabbling", "the lock gates groaning",
                                    "wind in the reeds"};
const char* const kRiverSmells[] = {"mud and mint", "river water", "creosote", "wild garlic"};
const char* const kRiverEvents[] = {"the flood", "the boat race", "the drought", "the regatta", "the ice"};

const char* const kRailPlaces[] = {"the signal box", "the goods yard", "the branch line", "the platform",
                                   "the engine shed", "the level crossing", "the waiting room", "the ticket office",
                                   "the water tower", "the viaduct", "the cutting", "the junction"};
const char* const kRailObjects[] = {"a lantern with a red lens", "the timetable", "a bent rail spike",
                                    "the signalman's diary", "a sack of mail", "the station clock", "a pot of grease",
                                    "the guard's whistle", "a crate of tools", "the track plan", "a coil of cable",
                                    "the lost luggage"};
const char* const kRailThings[] = {"wagons", "sleepers", "signals", "tickets", "lamps", "trunks", "levers", "benches",
                                   "coal sacks", "timetables"};
const char* const kRailPeople[] = {"passengers", "porters", "signalmen", "platelayers", "travellers", "drivers"};
const char* const kRailRoles[] = {"the stationmaster", "the signalman", "a porter", "the engine driver", "the guard",
                                  "the ticket clerk"};
const char* const kRailTopics[] = {"the closing of the branch line", "the late trains", "the new signals",
                                   "the repairs to the viaduct", "the winter timetable", "the goods traffic",
                                   "the fares"};
const char* const kRailSounds[] = {"a whistle in the cutting", "wheels over the points", "the signal bell",
                                   "steam escaping", "a door slamming along the train"};
const char* const kRailSmells[] = {"coal smoke", "hot oil", "wet ballast", "tea from the buffet"};
const char* const kRailEvents[] = {"the derailment", "the snowdrifts", "the last steam run", "the strike",
                                   "the opening of the viaduct"};

#define KV_DOMAIN(P)                                                                                              \
  ProseDomain {                                                                                                   \
    k##P##Places, k##P##Objects, k##P##Things, k##P##People, k##P##Roles, k##P##Topics, k##P##Sounds, k##P##Smells, \
        k##P##Events                                                                                              \
  }

const ProseDomain kDomains[] = {KV_DOMAIN(Harbor), KV_DOMAIN(Village),  KV_DOMAIN(Farm), KV_DOMAIN(City),
                                KV_DOMAIN(Mountain), KV_DOMAIN(Research), KV_DOMAIN(River), KV_DOMAIN(Rail)};
#undef KV_DOMAIN

// ---- shared vocabulary --------------------------------------------------------------------------

const char* const kFemaleNames[] = {
    "Agnes", "Alice", "Amara", "Beatrice", "Bridget", "Camille", "Clara", "Dora", "Edith", "Elena", "Elsie",
    "Esther", "Fatima", "Freya", "Greta", "Hannah", "Helena", "Ida", "Imogen", "Ines", "Iris", "Joan", "Judith",
    "Kaya", "Lena", "Lucia", "Mabel", "Margaret", "Marta", "Maya", "Mina", "Nadia", "Nell", "Nora", "Olive", "Priya",
    "Rosa", "Ruth", "Sabine", "Selma", "Sofia", "Tamsin", "Thea", "Ursula", "Vera", "Wren", "Yara", "Zora"};
const char* const kMaleNames[] = {
    "Abel", "Anton", "Arthur", "Bruno", "Caspar", "Cyril", "Dario", "Declan", "Edgar", "Elias", "Emil", "Felix",
    "Frank", "Gideon", "Hamid", "Hugo", "Ivan", "Jonas", "Jude", "Kofi", "Laszlo", "Leon", "Luca", "Malik", "Marcus",
    "Matthias", "Milo", "Nico", "Oscar", "Otto", "Pavel", "Pedro", "Quentin", "Rafael", "Rory", "Samuel", "Silas",
    "Stefan", "Theo", "Tobias", "Umar", "Victor", "Walter", "Wilbur", "Xavier", "Yusuf", "Zeke", "Ansel"};
const char* const kAdjectives[] = {
    "quiet", "pale", "golden", "grey", "narrow", "crowded", "empty", "familiar", "strange", "tidy", "crooked",
    "weathered", "peaceful", "restless", "gloomy", "bright", "faded", "damp", "dusty", "warm", "chilly", "cluttered",
    "orderly", "forgotten", "busy", "silent", "shabby", "handsome", "modest", "sturdy", "fragile", "ancient",
    "unremarkable", "lovely", "bleak", "cheerful", "solemn", "overgrown", "spotless", "drafty", "smoky", "sunlit",
    "shadowy", "muddy", "frosty", "windswept", "sleepy", "noisy"};
const char* const kFeelings[] = {"tired", "curious", "uneasy", "content", "restless", "hopeful", "doubtful",
                                 "cheerful", "anxious", "proud", "embarrassed", "relieved", "impatient", "thoughtful",
                                 "stubborn", "puzzled", "grateful", "wary", "homesick", "calm"};
const char* const kWeather[] = {
    "a cold wind came in from the west", "the rain had not stopped since dawn", "the fog lay thick along the road",
    "the sun broke through for a few minutes", "a light snow began to fall", "the sky cleared towards evening",
    "thunder rolled somewhere to the south", "the air was heavy and still", "a fine drizzle drifted over the roofs",
    "the frost had turned every puddle to glass", "low clouds hid the hills", "the wind dropped at last",
    "a warm breeze carried the smell of the fields", "hail rattled against the windows",
    "the evening light turned everything copper", "the heat made the road shimmer"};
const char* const kTimes[] = {"early in the morning", "just after dawn", "before breakfast", "around noon",
                              "in the middle of the afternoon", "towards evening", "after supper",
                              "late at night", "on the first day of spring", "the following week",
                              "a few days later", "at the end of the month", "on a grey Tuesday",
                              "the next morning", "long before the others woke", "shortly before dark"};
const char* const kDurations[] = {"nearly an hour", "most of the morning", "three long days", "a whole week",
                                  "several minutes", "the better part of a year", "two afternoons",
                                  "half the night", "a fortnight", "a few seconds"};
const char* const kPeriods[] = {"morning", "afternoon", "evening", "weekend", "summer", "winter", "week",
                                "night", "spring", "autumn"};
const char* const kSeasons[] = {"spring", "summer", "autumn", "winter", "early spring", "late autumn",
                                "the dry season", "midwinter"};
const char* const kMotions[] = {"walked", "hurried", "wandered", "drove", "cycled", "climbed", "strolled",
                                "trudged", "ran", "went"};
// verbs_past[i] and verbs_base[i] are the same verb.
const char* const kVerbsPast[] = {"repaired", "carried", "inspected", "painted", "cleaned", "measured", "sold",
                                  "borrowed", "hid", "wrapped", "counted", "examined", "moved", "polished",
                                  "replaced", "sketched", "weighed", "labeled", "returned", "sorted"};
const char* const kVerbsBase[] = {"repair", "carry", "inspect", "paint", "clean", "measure", "sell",
                                  "borrow", "hide", "wrap", "count", "examine", "move", "polish",
                                  "replace", "sketch", "weigh", "label", "return", "sort"};
const char* const kVerbsIntrans[] = {"waited by the window", "laughed quietly", "went home early",
                                     "sat down on the step", "fell asleep in the chair", "stared at the floor",
                                     "left without a word", "started to hum", "changed the subject",
                                     "kept on working", "closed the door softly", "looked out at the road",
                                     "turned back to the work", "wrote something down", "made a pot of tea",
                                     "lit the stove", "counted to ten", "took a long walk"};
const char* const kSaids[] = {"said", "remarked", "admitted", "explained", "muttered", "insisted", "replied",
                              "whispered", "announced", "observed"};
const char* const kManners[] = {"without looking up", "with a tired smile", "to nobody in particular",
                                "after a long pause", "as if it were obvious", "more sharply than intended",
                                "half aloud", "with a shrug"};
const char* const kQuotes[] = {"We should leave before dark", "It will keep until tomorrow",
                               "I have seen worse", "Nobody told me about that", "Let me think about it",
                               "That was not what I meant", "It always takes longer than you expect",
                               "We could try again in the spring", "Ask me again next week",
                               "I never liked that part of the job", "Someone has to do it",
                               "There is no point in hurrying", "It looked different last year",
                               "You will understand when you see it"};
const char* const kNumbers[] = {"two", "three", "four", "five", "six", "seven", "a dozen", "a few", "several",
                                "eight", "nine", "ten", "eleven", "twenty"};
const char* const kJudgements[] = {"a mistake", "a good idea", "inevitable", "a waste of time", "overdue",
                                   "a small miracle", "badly planned", "worth the trouble", "a gamble",
                                   "a relief to everyone"};
const char* const kAnswers[] = {"vague", "surprisingly long", "not what anyone wanted to hear", "short and polite",
                                "hard to follow", "honest", "a little evasive", "more cheerful than expected"};
const char* const kAnimals[] = {"heron", "fox", "crow", "cat", "hare", "owl", "badger", "magpie", "deer", "wren",
                                "goat", "dog", "robin", "stoat"};
const char* const kTails[] = {"although nobody asked why", "which surprised almost everyone",
                              "as the evening grew colder", "and the rest of the day passed slowly",
                              "just as the clock struck the hour", "though it hardly seemed to matter",
                              "and for once nobody complained", "while the kettle boiled",
                              "before anyone could object", "as it had every year before",
                              "and that was the end of it", "even though it was late"};
const char* const kGerunds[] = {"mending the fence", "sorting old papers", "writing letters", "cleaning windows",
                                "reading by the fire", "repainting the shutters", "talking with neighbors",
                                "looking for a lost key", "tidying the shed", "planning the next trip",
                                "learning a new song", "making lists"};
const char* const kBuilders[] = {"a family of stonemasons", "monks from the valley", "a rich merchant",
                                 "the first settlers", "a company that went bankrupt", "soldiers after the war",
                                 "a stubborn engineer", "the people who lived here before"};

const ProseWords kWords{kFemaleNames, kMaleNames, kAdjectives, kFeelings, kWeather,  kTimes,    kDurations,
                        kPeriods,     kSeasons,   kMotions,    kVerbsPast, kVerbsBase, kVerbsIntrans, kSaids,
                        kManners,     kQuotes,    kNumbers,    kJudgements, kAnswers,  kAnimals,  kTails,
                        kGerunds,     kBuilders};

// ---- templates ----------------------------------------------------------------------------------
// Slots: {S} a subject (sets {pron}/{pos}), {S2} another person, {place} {place2} {obj} {things}
// {people} {topic} {sound} {smell} {event} from the paragraph's setting; the rest from ProseWords.

const char* const kTemplates[] = {
    "{S} {motion} to {place} {time}.",
    "{time}, {S} {vt} {obj} near {place}.",
    "The {adj} light over {place} made everything look {adj2}.",
    "Nobody could remember when {place} had last been so {adj}.",
    "{S} kept {num} {things} in a box beside the door.",
    "{weather}, and {S} decided to stay at {place} a little longer.",
    "It was {S2} who first noticed that {obj} had gone missing.",
    "\"{quote},\" {S} {said}, {manner}.",
    "{S} had always been {feel} about {topic}.",
    "By the time {S} reached {place}, {weather}.",
    "Most of the {people} preferred {place} to {place2}, though few could say why.",
    "{S} {vt} {obj} and then {vi}.",
    "There were {num} {things} near {place}, each one {adj} in its own way.",
    "{S} spent the {period} {gerund}.",
    "According to {S2}, {topic} would change everything before the winter.",
    "Even {S2} admitted that {place} looked {adj} in {season}.",
    "{S} asked {S2} about {topic}, but the answer was {answer}.",
    "In {season}, {place} filled with {people} and the smell of {smell}.",
    "{S} wrote a long letter about {topic} and never sent it.",
    "For {duration}, {S} {vi}.",
    "When {S2} arrived with {obj}, the room went quiet.",
    "{S} could hear {sound} from {place}.",
    "Somewhere beyond {place}, {sound} rose and faded.",
    "The {people} gathered at {place} to talk about {topic}.",
    "{S} felt {feel}, but {pron} said nothing.",
    "Later, {S} would say that {topic} had been {judgement} from the start.",
    "{S} {vt} {obj} twice, just to be sure.",
    "Outside, {weather}.",
    "No one expected {S2} to come back to {place} so soon.",
    "{S} found {obj} behind {place} after a long search.",
    "{time}, the {people} began to leave {place}.",
    "It took {duration} to {vtb} {obj}, longer than anyone had planned.",
    "{S} smiled at {S2} and {vi}.",
    "The {adj} {animal} near {place} seemed not to mind the {people}.",
    "Few people knew that {S2} had once lived near {place}.",
    "The conversation turned to {topic}, as it often did.",
    "{S} {motion} past {place} without stopping.",
    "That {period}, {S} and {S2} {vt} {obj} together.",
    "It is said that {place} was built by {builder} long ago.",
    "{S} did not quite believe what {S2} said about {topic}.",
    "A {animal} watched from the edge of {place}.",
    "{S} paused at {place} to {vtb} {obj}.",
    "Nothing about {topic} was as simple as {S} had hoped.",
    "After {event}, {S} {vi}.",
    "After {event}, {place} never looked quite the same again.",
    "{S} still talked about {event} whenever {S2} was around.",
    "{S} left {obj} at {place} and forgot about it until {period}.",
    "The {people} said {topic} was {judgement}, and {S} was inclined to agree.",
    "{S} handed {obj} to {S2} without a word.",
    "When the {people} heard {sound}, they stopped what they were doing.",
    "{S} was {feel} all {period}, though {pron} could not say why.",
    "It had been {duration} since anyone mentioned {topic}.",
    "{S2} had counted {num} {things} near {place} that morning.",
    "The {things} at {place} were {adj} and badly in need of attention.",
    "Whenever {S} thought of {place}, {pron} remembered {smell}.",
    "{S} told {S2} that {pos} plans for {topic} had changed.",
    "{weather}, so the {people} stayed indoors.",
    "On the way to {place}, {S} stopped to look at the {things}.",
    "{S} promised {S2} to {vtb} {obj} by the end of the {period}.",
    "Nobody at {place} seemed {feel} about {topic} except {S2}.",
};

const char* const kShortTemplates[] = {
    "{S} nodded.",          "{S} laughed.",           "Nobody answered.",        "{S} waited.",
    "It was {adj}.",        "{S} agreed.",            "Time passed.",            "{S} sighed.",
    "The door creaked.",    "{S} said nothing.",      "{S} left early.",         "The lamps were lit.",
    "Nobody moved.",        "{S} shrugged.",          "Dusk came.",              "{S} felt {feel}.",
    "The {animal} was gone.", "{S} looked away.",     "It began to rain.",       "{S} was {feel}.",
    "The day was {adj}.",   "{S} went home.",         "Then it was quiet.",      "{S} kept walking.",
    "The {things} waited.", "{S} frowned.",           "Morning came slowly.",    "{S} knew.",
};

}  // namespace

std::span<const ProseDomain> prose_domains() { return kDomains; }
const ProseWords& prose_words() { return kWords; }
Words prose_templates() { return kTemplates; }
Words prose_short_templates() { return kShortTemplates; }

}  // namespace kvgate::haystack
